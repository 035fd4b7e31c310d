import Foundation
import Testing
import TestSupport

/// Sizes and offsets an archive declares are the attacker's numbers: each case once crashed
/// the program on an arithmetic overflow (exit 132) instead of refusing the input.
@Suite struct HostileArithmeticTests {
    /// A tarball whose second entry, of tar type `type`, declares a base-256 size of 2^64 - 1.
    static func tarballWithHugeSize(type: String, to path: String) throws {
        let script = """
            import gzip, sys
            def header(name, typeflag, size_field):
                h = bytearray(512)
                h[0:len(name)] = name.encode()
                h[100:108] = b"0000644\\0"; h[108:116] = b"0000000\\0"; h[116:124] = b"0000000\\0"
                h[124:136] = size_field
                h[136:148] = b"00000000000\\0"
                h[156] = ord(typeflag)
                h[257:263] = b"ustar\\0"; h[263:265] = b"00"
                h[148:156] = b" " * 8
                h[148:156] = b"%06o\\0 " % sum(h)
                return bytes(h)
            course = b'<course url_name="r" org="O" course="N"/>'
            tar = header("course/course.xml", "0", b"%011o\\0" % len(course)) + course + bytes(-len(course) % 512)
            tar += header("course/x", sys.argv[2], b"\\x80" + (2**64 - 1).to_bytes(11, "big")) + bytes(1024)
            with gzip.open(sys.argv[1], "wb") as f: f.write(tar)
            """
        let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, path, type])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Directory, pax global, GNU long link target and regular file entries alike.
    @Test(arguments: ["5", "g", "K", "0"])
    func aTarSizeNearTwoToTheSixtyFourIsExitTwoAndLeavesNoTemporaryFolder(type: String) throws {
        let folder = TestSupport.temporaryFolder("huge-tar")
        let tarball = folder + "/huge.tar.gz"
        try Self.tarballWithHugeSize(type: type, to: tarball)
        let temporary = folder + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let result = try TestSupport.run("/usr/bin/env", ["TMPDIR=" + temporary, TestSupport.coursepackBinary, "build", tarball, "--out", folder + "/out"])
        #expect(result.status == 2, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains(tarball) && result.stderr.contains("18446744073709551615 bytes"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [], "the unpacking folder is removed")
        #expect(!FileManager.default.fileExists(atPath: folder + "/out/manifest.json"))
    }

    /// A ZIP64 locator pointing 16 bytes short of 2^64 once wrapped `offset + 56` past the
    /// bounds check; `verify` now reports the archive as damaged (exit 1).
    @Test func aZIP64LocatorOffsetNearTwoToTheSixtyFourIsAVerifyFailure() throws {
        let out = TestSupport.temporaryFolder("zip64-publish")
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(out + "/manifest.json"))) as? [String: Any])
        let blocks = try #require(manifest["blocks"] as? [[String: Any]])
        let entry = try #require(blocks.first { $0["archive"] is String })
        let archive = out + "/" + (try #require(entry["archive"] as? String))
        let size = try #require(entry["size"] as? Int)
        let script = """
            import struct, sys
            size = int(sys.argv[2])
            eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
            locator = struct.pack("<IIQI", 0x07064b50, 0, 2**64 - 16, 1)
            body = locator + eocd
            open(sys.argv[1], "wb").write(bytes(size - len(body)) + body)
            """
        let written = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, archive, String(size)])
        #expect(written.status == 0, "\(written.stderr)")
        let result = try TestSupport.coursepack(["verify", out])
        #expect(result.status == 1, "\(result.status): \(result.stderr)")
        #expect((result.stdout + result.stderr).contains("ZIP64 record out of bounds"), "\(result.stdout)\(result.stderr)")
    }

    /// Sets a file's (or a link's own) access and modification times to `seconds` since 1970.
    static func setTimes(_ path: String, seconds: Int) {
        let time = timespec(tv_sec: seconds, tv_nsec: 0)
        var times = [time, time]
        #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0, "\(path): \(String(cString: strerror(errno)))")
    }

    /// Anyone can give a file a time that is no `Int64` of nanoseconds (`touch -d @10000000000`,
    /// or the times an unzip or a copy carries over); multiplying it out crashed every build of
    /// the course, and every sync of a target that held such a file. Times past 2262 and
    /// before 1677, in the course and in an installed target alike.
    @Test func fileTimesBeyondInt64NanosecondsAreBuiltAndSyncedAgain() throws {
        let folder = TestSupport.temporaryFolder("far-times")
        let course = folder + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let html = try #require(try FileManager.default.contentsOfDirectory(atPath: course + "/html").sorted().first)
        Self.setTimes(course + "/html/" + html, seconds: 10_000_000_000)
        Self.setTimes(course + "/course.xml", seconds: -10_000_000_000)
        let out = folder + "/out"
        for round in ["first", "no-op"] {
            let build = try TestSupport.coursepack(["build", course, "--out", out, "-q"])
            #expect(build.status == 0, "\(round) build: \(build.status) \(build.stderr)")
        }

        let target = folder + "/target"
        let first = try TestSupport.coursepack(["sync", out, "--to", target])
        #expect(first.status == 0, "\(first.status) \(first.stderr)")
        let installed = try #require(FileManager.default.enumerator(atPath: target)?.allObjects as? [String])
        let pages = installed.filter { $0.hasSuffix("index.html") }
        #expect(!pages.isEmpty)
        for (number, page) in pages.enumerated() {
            Self.setTimes(target + "/" + page, seconds: number % 2 == 0 ? 10_000_000_000 : -300_000_000)
            Self.setTimes(target + "/" + (page as NSString).deletingLastPathComponent, seconds: -300_000_000)
        }
        let again = try TestSupport.coursepack(["sync", out, "--to", target])
        #expect(again.status == 0, "\(again.status) \(again.stderr)")
        #expect(!again.stderr.contains("overflow"), "\(again.stderr)")
    }

    /// Two blocks that each claim 2^64 - 1 bytes: adding them up for `diff` trapped. A manifest
    /// `diff` reads is checked as a sync checks it, and refused with its name.
    @Test func aDiffOfManifestsClaimingHugeSizesIsRefusedNotACrash() throws {
        let folder = TestSupport.temporaryFolder("huge-diff")
        let out = folder + "/out"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(out + "/manifest.json"))) as? [String: Any])
        let blocks = try #require(manifest["blocks"] as? [[String: Any]])
        manifest["blocks"] = blocks.map { block -> [String: Any] in
            var block = block
            if block["size"] != nil { block["size"] = UInt64.max }
            return block
        }
        try FileManager.default.createDirectory(atPath: folder + "/huge", withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: folder + "/huge/manifest.json"))
        for (old, new) in [(out, folder + "/huge"), (folder + "/huge", out)] {
            let result = try TestSupport.coursepack(["diff", old, new])
            #expect(result.status == 2, "\(result.status): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains(folder + "/huge/manifest.json") && !result.stderr.contains("overflow"), "\(result.stderr)")
        }
    }

    /// A manifest naming an archive that is nothing but the staging marker
    /// (`html/.staged-<16 hex>`): reading it as a staged copy's name made an inverted range, and
    /// `verify` crashed. It is no archive name a build writes, and `verify` says so.
    @Test func anArchiveNamedLikeABareStagedMarkerIsRefusedByVerify() throws {
        let out = TestSupport.temporaryFolder("bare-staged")
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        for name in ["manifest-index.json"] { unlink(out + "/" + name) }
        let text = String(decoding: TestSupport.read(out + "/manifest.json"), as: UTF8.self)
        let archive = try #require(text.firstMatch(of: /"archive" : "(html\/[^"]+)"/)?.1)
        let edited = text.replacingOccurrences(of: "\"\(archive)\"", with: "\"html/.staged-0123456789abcdef\"")
        try TestSupport.writeBytes(Array(edited.utf8), to: out + "/manifest.json")
        let result = try TestSupport.coursepack(["verify", out])
        #expect(result.status == 1 || result.status == 2, "\(result.status): \(result.stdout)\(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains("Range requires"), "\(result.stdout)\(result.stderr)")
        #expect((result.stdout + result.stderr).contains("html/.staged-0123456789abcdef"), "\(result.stdout)\(result.stderr)")
    }
}

