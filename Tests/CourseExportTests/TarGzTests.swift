import CourseExport
import Foundation
import Testing
import TestSupport

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
        try TestSupport.makeTarball([
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
        try TestSupport.makeTarball([("course/course.xml", "file", #"<course url_name="r" org="O" course="N"/>"#), (name, kind, data)], to: tarball)
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
