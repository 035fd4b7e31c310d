import Foundation
import Testing
import TestSupport

/// A small course whose one vertical holds `children`; `files` adds or replaces files.
func hostileCourse(_ children: String, _ files: [String: String] = [:]) throws -> String {
    let root = TestSupport.temporaryFolder("hostile") + "/course"
    var all = [
        "course.xml": #"<course url_name="r" org="O" course="N"/>"#,
        "course/r.xml": #"<course><chapter url_name="c"/></course>"#,
        "chapter/c.xml": #"<chapter><sequential url_name="s"/></chapter>"#,
        "sequential/s.xml": #"<sequential><vertical url_name="v"/></sequential>"#,
        "vertical/v.xml": "<vertical><html url_name=\"good\"/>\(children)</vertical>",
        "html/good.xml": #"<html filename="good"/>"#,
        "html/good.html": "<p>good</p>",
        "static/readme.txt": "static files live here",
    ]
    for (path, text) in files { all[path] = text }
    try TestSupport.write(all, under: root)
    return root
}

/// Builds, expecting `status`, with `fragment` in standard error; the good block is always
/// published and nothing appears outside the output folder but its state folder beside it.
@discardableResult
func expectBuild(_ course: String, status: Int32, mentions fragment: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let parent = TestSupport.temporaryFolder("hostile-out")
    let out = parent + "/out"
    let result = try TestSupport.coursepack(["build", course, "--out", out])
    #expect(result.status == status, "\(result.stderr)", sourceLocation: sourceLocation)
    if !fragment.isEmpty {
        #expect(result.stderr.contains(fragment), "expected \"\(fragment)\" in: \(result.stderr)", sourceLocation: sourceLocation)
    }
    if status != 2 {
        #expect(FileManager.default.fileExists(atPath: out + "/html/good.zip"), sourceLocation: sourceLocation)
        #expect(try TestSupport.coursepack(["verify", out]).status == 0, sourceLocation: sourceLocation)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: parent).sorted() == (status == 2 ? [] : ["out", "out.coursepack-state"]), sourceLocation: sourceLocation)
    return out
}

@Suite struct HostileInputTests {
    @Test func pointerCyclesAreReported() throws {
        let course = try hostileCourse(#"<vertical url_name="loop"/>"#, ["vertical/loop.xml": #"<vertical><vertical url_name="loop"/></vertical>"#])
        try expectBuild(course, status: 1, mentions: "pointer cycle: vertical/loop.xml includes itself")
    }

    @Test func unsafeFilenamesAndURLNamesAreReported() throws {
        let course = try hostileCourse(
            #"<html url_name="evil"/><html url_name="..:..:..:etc:passwd"/><html url_name="nul&#0;name"/>"#,
            ["html/evil.xml": #"<html filename="../../../../etc/passwd"/>"#])
        let out = try expectBuild(course, status: 1, mentions: "filename=\"../../../../etc/passwd\" is not a plain file name")
        let report = try TestSupport.coursepack(["build", course, "--out", out, "--report", out + "/../r.json"])
        #expect(report.stderr.contains("url_name contains an empty, . or .. path component"))
        #expect(report.stderr.contains("url_name contains a NUL byte"))
    }

    @Test func legacyEncodingsBOMsAndCRLFSurvive() throws {
        var latin1: [UInt8] = Array("<p>Caf".utf8) + [0xE9] + Array(" cr\u{00}".utf8.dropLast()) + Array("<img src=\"/static/a.png\"></p>\r\n".utf8)
        latin1.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0)
        let course = try hostileCourse(#"<html url_name="latin"/>"#, ["html/latin.xml": "\u{FEFF}<html filename=\"latin\"\r\n  display_name=\"Latin-1\"/>\r\n", "static/a.png": "PNG"])
        try TestSupport.writeBytes(latin1, to: course + "/html/latin.html")
        let out = try expectBuild(course, status: 0, mentions: "")
        let bytes = try TestSupport.run("/bin/sh", ["-c", "unzip -p '\(out)/html/latin.zip' index.html | od -An -tx1 | tr -d ' \\n'"]).stdout
        #expect(bytes.contains("436166e9"), "the Latin-1 byte is kept as it was")
        #expect(bytes.contains(Array("src=\"static/a.png\"".utf8).map { String(format: "%02x", $0) }.joined()))
        #expect(!bytes.contains("efbbbf"), "the BOM is not carried into the page body")
    }

    @Test func fifosAndSymlinksOutOfTheExportAreNotRead() throws {
        let course = try hostileCourse(#"<html url_name="fifo"/><html url_name="linked"/>"#, [
            "html/fifo.xml": #"<html filename="fifo"/>"#,
            "html/linked.xml": #"<html filename="linked"/>"#,
            "html/linked-target.html": "<img src=\"/static/secret.txt\">",
        ])
        #expect(mkfifo(course + "/html/fifo.html", 0o644) == 0)
        let outside = TestSupport.temporaryFolder("outside")
        try TestSupport.write(["secret.txt": "TOP SECRET"], under: outside)
        try FileManager.default.createSymbolicLink(atPath: course + "/static/secret.txt", withDestinationPath: outside + "/secret.txt")
        try FileManager.default.createSymbolicLink(atPath: course + "/html/linked.html", withDestinationPath: outside + "/secret.txt")
        let out = try expectBuild(course, status: 1, mentions: "html/fifo.html")
        let all = try TestSupport.allArchiveText(out)
        #expect(!all.contains("TOP SECRET"))
    }

    @Test func aBadOrNewerManifestInTheOutputFolderIsRefusedAndKept() throws {
        let course = try hostileCourse("")
        for text in ["{\"schema_version\": 99}", "not json at all"] {
            let out = TestSupport.temporaryFolder("out")
            try TestSupport.write(["manifest.json": text], under: out)
            let result = try TestSupport.coursepack(["build", course, "--out", out])
            #expect(result.status == 2)
            #expect(result.stderr.contains(out + "/manifest.json"), "\(result.stderr)")
            #expect(String(decoding: TestSupport.read(out + "/manifest.json"), as: UTF8.self) == text)
        }
    }

    @Test func anOutputFolderThatCannotBeCreatedIsExitTwo() throws {
        let folder = TestSupport.temporaryFolder("out")
        try TestSupport.write(["file": "x"], under: folder)
        let result = try TestSupport.coursepack(["build", try hostileCourse(""), "--out", folder + "/file/out"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(folder + "/file/out"), "\(result.stderr)")
    }

    /// A full disk fails the blocks that do not fit; the previous publish stays complete.
    @Test func aFullDiskLosesNothing() throws {
        let mountPoint = TestSupport.temporaryFolder("tmpfs")
        let mount = try TestSupport.run("/bin/mount", ["-t", "tmpfs", "-o", "size=600k", "tmpfs", mountPoint])
        // Without the mount there is no full disk to test: a recorded failure, never a silent pass.
        guard mount.status == 0 else {
            Issue.record("cannot mount a small tmpfs to simulate a full disk (the test needs root): \(mount.stderr)")
            return
        }
        defer { _ = try? TestSupport.run("/bin/umount", [mountPoint]) }
        let course = try hostileCourse(#"<html url_name="big"/>"#, ["html/big.xml": #"<html filename="big"/>"#, "html/big.html": "<p>small for now</p>"])
        let out = mountPoint + "/out"
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "-q"]).status == 0)
        let before = TestSupport.read(out + "/manifest.json")
        // Now the page carries 2 MB of incompressible data: it cannot fit.
        var rng = SystemRandomNumberGenerator()
        let noise = (0..<1_500_000).map { _ in UInt8.random(in: 0x41...0x5A, using: &rng) }
        try TestSupport.writeBytes(Array("<p>".utf8) + noise + Array("</p>".utf8), to: course + "/html/big.html")
        let full = try TestSupport.coursepack(["build", course, "--out", out])
        #expect(full.status == 1 || full.status == 2, "\(full.stderr)")
        #expect(full.stderr.contains("No space left on device"), "\(full.stderr)")
        #expect(TestSupport.read(out + "/manifest.json") == before)
        #expect(try TestSupport.coursepack(["verify", out]).status == 0)
    }

    /// The largest course file a client accepts (4 GiB, sparse; past 2^32 - 1 bytes, so ZIP64)
    /// streams through in bounded memory, as a ZIP64 entry any reader opens. 13 MiB of random
    /// bytes spread through it keep it within the ratio clients accept (4 GiB of zeros alone is
    /// refused as a zip bomb: `SharedLimitsTests`).
    @Test func theLargestCourseFileStreamsAsZIP64WithBoundedMemory() throws {
        let course = try hostileCourse(#"<html url_name="huge"/>"#, ["html/huge.xml": #"<html filename="huge"/>"#, "html/huge.html": #"<a href="/static/huge.log">log</a>"#])
        #expect(FileManager.default.createFile(atPath: course + "/static/huge.log", contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: course + "/static/huge.log"))
        try handle.truncate(atOffset: 4 << 30)
        var rng = SystemRandomNumberGenerator()
        for chunk in 0..<13 {
            try handle.seek(toOffset: UInt64(chunk) * (300 << 20) + (200 << 20))
            try handle.write(contentsOf: Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        }
        try handle.close()
        let out = TestSupport.temporaryFolder("huge")
        let timed = try TestSupport.run("/usr/bin/time", ["-f", "%M", TestSupport.coursepackBinary, "build", course, "--out", out, "-q"])
        #expect(timed.status == 0, "\(timed.stderr)")
        let peakKB = Int(timed.stderr.split(separator: "\n").last ?? "") ?? Int.max
        #expect(peakKB < 200 * 1024, "peak RSS \(peakKB) KB")
        let check = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", """
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            info = z.getinfo("static/huge.log")
            assert info.file_size == 4 << 30, info.file_size
            with z.open(info) as f:
                assert f.read(1 << 20) == bytes(1 << 20)
            print("ok")
            """, out + "/html/huge.zip"])
        #expect(check.stdout.contains("ok"), "\(check.stderr)")
        // unzip inflates all 4 GiB and checks the CRC.
        #expect(try TestSupport.run(try #require(TestSupport.which("unzip")), ["-tqq", out + "/html/huge.zip"]).status == 0)
    }

    @Test func clientRefusesDuplicateIDsAndAbsurdSizes() throws {
        let published = TestSupport.temporaryFolder("sync")
        _ = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        // The hostile manifest.json is the publish (as builders wrote it before the split form).
        try TestSupport.removeSplitManifest(published)
        let original = String(decoding: TestSupport.read(published + "/manifest.json"), as: UTF8.self)
        let patches = [
            ("import json,sys; m=json.load(open(sys.argv[1])); m['blocks'].append(m['blocks'][0]); json.dump(m, open(sys.argv[1],'w'))", "listed twice"),
            ("import json,sys; m=json.load(open(sys.argv[1])); m['blocks'][0]['size']=1<<60; json.dump(m, open(sys.argv[1],'w'))", "no plausible archive size"),
        ]
        for (script, reason) in patches {
            try TestSupport.write(["manifest.json": original], under: published)
            _ = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, published + "/manifest.json"])
            let target = TestSupport.temporaryFolder("device")
            let result = try TestSupport.coursepack(["sync", published, "--to", target])
            #expect(result.status == 2)
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target + exampleFolder), "nothing is created")
        }
    }

    /// Each hostile tarball stops the build with exit 2, names the tarball, and leaves the
    /// previous publish byte for byte as it was.
    @Test func hostileTarballsStopTheBuildAndKeepThePreviousPublish() throws {
        let out = TestSupport.temporaryFolder("publish")
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        let before = TestSupport.files(under: out).filter { !$0.hasPrefix(".") }.map { ($0, TestSupport.read(out + "/" + $0)) }
        let folder = TestSupport.temporaryFolder("tarballs")
        let courseXML = ("course/course.xml", "file", #"<course url_name="2026" org="CoursepackX" course="CP101"/>"#)
        let cases: [(String, [(name: String, kind: String, data: String)], String)] = [
            ("dotdot", [courseXML, ("course/../../evil.txt", "file", "x")], "climbs out"),
            ("absolute", [courseXML, ("/tmp/evil.txt", "file", "x")], "absolute path"),
            ("symlink", [courseXML, ("course/static/link", "symlink", "/etc/passwd")], "symbolic link"),
            ("hardlink", [courseXML, ("course/static/hard", "hardlink", "course/course.xml")], "hard link"),
        ]
        var tarballs: [(String, String)] = []
        for (name, members, reason) in cases {
            try TestSupport.makeTarball(members, to: folder + "/\(name).tar.gz")
            tarballs.append((folder + "/\(name).tar.gz", reason))
        }
        let tar = try #require(TestSupport.which("tar"))
        _ = try TestSupport.run(tar, ["czf", folder + "/whole.tar.gz", "-C", TestSupport.packageRoot + "/examples", "coursepack-101"])
        let whole = TestSupport.read(folder + "/whole.tar.gz")
        try TestSupport.writeBytes(Array(whole.prefix(whole.count / 2)), to: folder + "/truncated.tar.gz")
        tarballs.append((folder + "/truncated.tar.gz", "truncated"))
        let bomb = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", """
            import gzip, sys
            with gzip.open(sys.argv[1], "wb", compresslevel=9) as f:
                for _ in range(1024): f.write(bytes(1 << 20))
            """, folder + "/bomb.tar.gz"])
        #expect(bomb.status == 0)
        tarballs.append((folder + "/bomb.tar.gz", "gzip bomb"))

        for (tarball, reason) in tarballs {
            let result = try TestSupport.coursepack(["build", tarball, "--out", out])
            #expect(result.status == 2, "\(tarball): \(result.stderr)")
            #expect(result.stderr.contains(tarball) && result.stderr.contains(reason), "\(result.stderr)")
            let after = TestSupport.files(under: out).filter { !$0.hasPrefix(".") }.map { ($0, TestSupport.read(out + "/" + $0)) }
            #expect(after.map(\.0) == before.map(\.0) && after.map(\.1) == before.map(\.1), "\(tarball) changed the publish")
            #expect(try TestSupport.coursepack(["verify", out]).status == 0)
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil.txt") && !FileManager.default.fileExists(atPath: folder + "/../evil.txt"))
    }

    @Test func driveLetterURLNamesStayInsideTheExport() throws {
        let course = try hostileCourse(#"<html url_name="C:evil"/>"#)
        try expectBuild(course, status: 1, mentions: "html/C/evil.xml, which is missing")
    }
}
