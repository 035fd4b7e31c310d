import CourseExport
import Foundation
import Testing
import TestSupport

/// Writes a .tar.gz with Python's tarfile (an independent writer) from a list of members.
func makeTarball(_ members: [(name: String, kind: String, data: String)], to path: String) throws {
    let spec = members.map { "\($0.kind)\t\($0.name)\t\($0.data)" }.joined(separator: "\n")
    let script = """
        import io, sys, tarfile
        with tarfile.open(sys.argv[1], "w:gz", format=tarfile.GNU_FORMAT) as tar:
            for line in sys.stdin.read().split("\\n"):
                kind, name, data = line.split("\\t")
                info = tarfile.TarInfo(name)
                if kind == "file":
                    payload = data.encode()
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
                elif kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                elif kind == "symlink":
                    info.type = tarfile.SYMTYPE
                    info.linkname = data
                    tar.addfile(info)
                elif kind == "hardlink":
                    info.type = tarfile.LNKTYPE
                    info.linkname = data
                    tar.addfile(info)
        """
    let input = TestSupport.temporaryFolder("spec") + "/spec.txt"
    try TestSupport.write(["spec.txt": spec], under: (input as NSString).deletingLastPathComponent)
    let python = try #require(TestSupport.which("python3"))
    let result = try TestSupport.run("/bin/sh", ["-c", "\"$0\" -c \"$1\" \"$2\" < \"$3\"", python, script, path, input])
    #expect(result.status == 0, "\(result.stderr)")
}

@Suite struct TarGzTests {
    @Test func aStudioTarballGivesTheSameCourseAsItsFolder() throws {
        let tarball = TestSupport.temporaryFolder("tgz") + "/course.tar.gz"
        let tar = try #require(TestSupport.which("tar"))
        let result = try TestSupport.run(tar, ["czf", tarball, "-C", TestSupport.packageRoot + "/examples", "coursepack-101"])
        #expect(result.status == 0)
        let (fromTar, export) = try CourseLoader.open(tarball)
        defer { export.close() }
        let fromFolder = try CourseLoader.load(try ExportDirectory(root: TestSupport.exampleCourse))
        #expect(fromTar.blocks.map(\.usageID) == fromFolder.blocks.map(\.usageID))
        #expect(fromTar.blocks.map(\.displayName) == fromFolder.blocks.map(\.displayName))
        #expect(fromTar.staticFiles.paths == fromFolder.staticFiles.paths)
        let folder = try #require(export.temporaryFolder)
        export.close()
        #expect(!FileManager.default.fileExists(atPath: folder), "the unpacked copy is removed")
    }

    @Test func longNamesFromGNUTarballsAreRead() throws {
        let long = String(repeating: "d", count: 120) + "/file.png"
        let tarball = TestSupport.temporaryFolder("tgz") + "/c.tar.gz"
        try makeTarball([
            ("course/course.xml", "file", #"<course url_name="r" org="O" course="N"/>"#),
            ("course/course/r.xml", "file", "<course/>"),
            ("course/static/" + long, "file", "png"),
        ], to: tarball)
        let (course, export) = try CourseLoader.open(tarball)
        export.close()
        #expect(course.staticFiles.paths == [long])
    }

    @Test(arguments: [
        ("../escape.xml", "file", "x", "climbs out"),
        ("/etc/evil", "file", "x", "absolute"),
        ("course/link", "symlink", "/etc/passwd", "symbolic link"),
        ("course/hard", "hardlink", "course/course.xml", "hard link"),
    ])
    func hostileEntriesAreRefused(name: String, kind: String, data: String, reason: String) throws {
        let tarball = TestSupport.temporaryFolder("tgz") + "/bad.tar.gz"
        try makeTarball([("course/course.xml", "file", #"<course url_name="r" org="O" course="N"/>"#), (name, kind, data)], to: tarball)
        do {
            _ = try CourseLoader.open(tarball)
            Issue.record("a tarball with \(name) was accepted")
        } catch {
            #expect(error.path == tarball)
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test func truncatedAndGarbageTarballsNameTheFile() throws {
        let folder = TestSupport.temporaryFolder("tgz")
        let tarball = folder + "/course.tar.gz"
        let tar = try #require(TestSupport.which("tar"))
        _ = try TestSupport.run(tar, ["czf", tarball, "-C", TestSupport.packageRoot + "/examples", "coursepack-101"])
        let bytes = TestSupport.read(tarball)
        try TestSupport.writeBytes(Array(bytes.prefix(bytes.count / 2)), to: folder + "/truncated.tar.gz")
        try TestSupport.writeBytes(Array("this is not gzip".utf8), to: folder + "/garbage.tar.gz")
        for name in ["truncated.tar.gz", "garbage.tar.gz"] {
            #expect(throws: CourseError.self) { _ = try CourseLoader.open(folder + "/" + name) }
            do { _ = try CourseLoader.open(folder + "/" + name) } catch { #expect(error.path == folder + "/" + name) }
        }
    }

    @Test func aGzipBombIsRefused() throws {
        // 2 GiB of zeros compress to about 2 MB: far past any real course's ratio.
        let folder = TestSupport.temporaryFolder("bomb")
        let script = """
            import gzip, sys
            with gzip.open(sys.argv[1], "wb", compresslevel=9) as f:
                chunk = bytes(1 << 20)
                for _ in range(2048):
                    f.write(chunk)
            """
        let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, folder + "/bomb.tar.gz"])
        #expect(result.status == 0)
        do {
            _ = try CourseLoader.open(folder + "/bomb.tar.gz")
            Issue.record("the bomb was accepted")
        } catch {
            #expect(error.description.contains("gzip bomb"), "\(error)")
        }
    }
}
