import FileSystem
import Foundation
import Manifest
import Packager
import Testing
import TestSupport
import ZipArchive

/// Issue 31, builder side: every content is published once under `files/` by its SHA-256, each
/// folder lists its contents, and the block archives are assembled from the published bytes.
@Suite(.serialized) struct CourseFilesTests {
    static let demo = TestSupport.demoCourse

    /// Python (zipfile, gzip, hashlib) as the independent reader: every archive holds exactly
    /// its listing, byte for byte; each entry's compressed bytes are those of the published file
    /// (the `.gz`'s deflate stream, or the stored file), so nothing was compressed twice; every
    /// published file decodes to bytes whose SHA-256 is its name; unpacked sizes add up.
    static let independentCheck = """
        import gzip, hashlib, json, os, struct, sys, zipfile
        out = sys.argv[1]
        m = json.load(open(os.path.join(out, "manifest.json")))
        files, bad = m["files"], []
        def published(sha):
            f = files[sha]
            return os.path.join(out, "files", sha[:2], sha + (".gz" if f.get("encoding") == "gzip" else ""))
        for sha, f in files.items():
            data = open(published(sha), "rb").read()
            content = gzip.decompress(data) if f.get("encoding") == "gzip" else data
            if len(data) != f["compressed_size"] or len(content) != f["size"] or hashlib.sha256(content).hexdigest() != sha:
                bad.append("content " + sha)
        folders = [b for b in m["blocks"] if "archive" in b] + [m["runtime"], m["search"]]
        for b in folders:
            raw = open(os.path.join(out, b["archive"]), "rb").read()
            z = zipfile.ZipFile(os.path.join(out, b["archive"]))
            if sorted(i.filename for i in z.infolist()) != sorted(b["files"]): bad.append("names " + b["archive"])
            total = 0
            for i in z.infolist():
                sha = b["files"].get(i.filename)
                data = z.read(i)
                total += len(data)
                if sha is None or hashlib.sha256(data).hexdigest() != sha:
                    bad.append("bytes " + b["archive"] + " " + i.filename); continue
                name_len, extra_len = struct.unpack("<HH", raw[i.header_offset + 26:i.header_offset + 30])
                start = i.header_offset + 30 + name_len + extra_len
                body = raw[start:start + i.compress_size]
                pub = open(published(sha), "rb").read()
                gz = files[sha].get("encoding") == "gzip"
                if body != (pub[10:-8] if gz else pub) or i.compress_type != (8 if gz else 0):
                    bad.append("recompressed " + b["archive"] + " " + i.filename)
            if total != b["unpacked_size"]: bad.append("unpacked_size " + b["archive"])
        print(len(files), len(folders))
        print("\\n".join(bad))
        """

    @Test func listingsMatchArchivesAndEveryContentDecodesToItsName() throws {
        let (out, report) = try build(Self.demo)
        #expect(report.errors == [])
        let manifest = try manifest(in: out)
        let files = try #require(manifest.files)
        let python = try #require(TestSupport.which("python3"))
        let result = try TestSupport.run(python, ["-c", Self.independentCheck, out])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = "\(files.count) \(manifest.blocks.count { $0.archive != nil } + 2)"
        let failures = lines.dropFirst().filter { !$0.isEmpty }
        #expect(lines.first == header)
        #expect(failures == [])

        // The project's own reader agrees, and `unzip -t` too.
        let folders = manifest.blocks.filter { $0.archive != nil }.map { ($0.archive, $0.files) } + manifest.sharedArchives.map { ($0.archive, $0.files) }
        for (archive, listing) in folders {
            let listing = try #require(listing, "\(archive ?? "") has no files listing")
            let reader = try ZipReader(path: out + "/" + (archive ?? ""))
            #expect(Set(reader.entries.map(\.name)) == Set(listing.keys))
            for entry in reader.entries {
                let bytes = try reader.contents(of: entry.name)
                #expect(SHA256Hex.of(bytes) == listing[entry.name], "\(archive ?? "") \(entry.name)")
            }
        }
        #expect(try TestSupport.independentZipCheck(folders.compactMap(\.0).map { out + "/" + $0 }) == [])
        let verified = try PublishVerifier.verify(folder: out)
        #expect(verified.problems.map(\.message) == [])
        #expect(verified.contentsChecked == files.count)
    }

    /// A content changed in place (same size), one missing, and a listing that names no
    /// content are each found by `verify`, naming the file.
    @Test func verifyFindsDamagedMissingAndUnlistedContents() throws {
        let (out, _) = try build(TestSupport.exampleCourse)
        var manifest = try manifest(in: out)
        let files = try #require(manifest.files).sorted { $0.key < $1.key }
        let gzip = try #require(files.first { $0.value.encoding == .gzip })
        let other = try #require(files.first { $0.key != gzip.key })
        let damaged = gzip.value.path(sha256: gzip.key)
        var bytes = TestSupport.read(out + "/" + damaged)
        bytes[bytes.count / 2] ^= 0xFF
        try TestSupport.writeBytes(bytes, to: out + "/" + damaged)
        let missing = other.value.path(sha256: other.key)
        try FileManager.default.removeItem(atPath: out + "/" + missing)
        let index = try #require(manifest.blocks.firstIndex { $0.files != nil })
        manifest.blocks[index].files?["static/unlisted.txt"] = String(repeating: "0", count: 64)
        try ManifestFile.write(manifest, to: out + "/manifest.json")

        let problems = try PublishVerifier.verify(folder: out).problems
        #expect(problems.contains { $0.file == damaged && $0.message.contains("decode") })
        #expect(problems.contains { $0.file == missing && $0.message == "content is missing" })
        #expect(problems.contains { $0.block == manifest.blocks[index].usageID && $0.message.contains("static/unlisted.txt") })
    }

    @Test func twoBuildsOfOneCourseAreIdenticalFolders() throws {
        let (first, _) = try build(Self.demo)
        let (second, _) = try build(Self.demo)
        let diff = try TestSupport.run(try #require(TestSupport.which("diff")), ["-r", first, second])
        #expect(diff.status == 0, "\(diff.stdout.prefix(2000))")
        #expect(TestSupport.files(under: first).contains { $0.hasPrefix("files/") })
    }

    /// (inode, modification time) of every published content, by path.
    static func contentStamps(_ out: String) -> [String: [Int64]] {
        var stamps: [String: [Int64]] = [:]
        for path in TestSupport.files(under: out + "/files") {
            if let stamp = FileStamp.of(out + "/files/" + path) { stamps[path] = [Int64(stamp.inode), stamp.modified] }
        }
        return stamps
    }

    /// A copy of the demo course, built into a fresh folder: the copy, the folder, its manifest.
    static func builtDemoCopy() throws -> (course: String, out: String, manifest: CourseManifest) {
        let course = TestSupport.temporaryFolder("course")
        try TestSupport.copy(demo, to: course)
        let out = TestSupport.temporaryFolder("out")
        _ = try build(course, into: out, now: TestSupport.clockAhead)
        return (course, out, try manifest(in: out))
    }

    @Test func editingTheStyleSheetMostBlocksUsePublishesOneContentAndRemovesTheOld() throws {
        let (course, out, before) = try Self.builtDemoCopy()
        let stampsBefore = Self.contentStamps(out)
        let sheet = "static/cm_style_guide_demox.css"
        let users = before.blocks.filter { $0.files?["static/" + "cm_style_guide_demox.css"] != nil }
        #expect(users.count == 287, "the demo course's style sheet is used by 287 blocks")
        let oldSheet = try #require(users.first?.files?["static/cm_style_guide_demox.css"])

        var bytes = TestSupport.read(course + "/" + sheet)
        bytes += Array("\n.coursepack-test-edit { color: #123456; }\n".utf8)
        try TestSupport.writeBytes(bytes, to: course + "/" + sheet)
        let (_, report) = try build(course, into: out, publishedAt: "2026-11-23T10:00:00Z", now: TestSupport.clockAhead)
        #expect(report.errors == [])
        let after = try manifest(in: out)
        let stampsAfter = Self.contentStamps(out)

        let added = Set(stampsAfter.keys).subtracting(stampsBefore.keys)
        let removed = Set(stampsBefore.keys).subtracting(stampsAfter.keys)
        // The sheet's links are rewritten, so its content is not the course file's bytes.
        let sheets = after.blocks.compactMap { $0.files?["static/cm_style_guide_demox.css"] }
        let newSheet = try #require(sheets.first)
        #expect(newSheet != oldSheet)
        #expect(after.blocks.count { $0.files?["static/cm_style_guide_demox.css"] == newSheet } == 287)
        #expect(added == [String(newSheet.prefix(2)) + "/" + newSheet + ".gz"])
        #expect(removed == [String(oldSheet.prefix(2)) + "/" + oldSheet + ".gz"])
        #expect(after.files?[oldSheet] == nil)
        // Every other content is the very file the first build wrote.
        for (path, stamp) in stampsAfter where !added.contains(path) {
            #expect(stampsBefore[path] == stamp, "\(path) was written again")
        }
        #expect(try PublishVerifier.verify(folder: out).problems.map(\.message) == [])
    }

    /// A published content kept from the previous publish is trusted as an archive is (its size,
    /// not changed since the manifest was written), so the blocks that only list it are reused;
    /// its gzip framing is read once a block built now copies it, and a damaged one is written
    /// again, not copied into the new archive.
    @Test func aContentDamagedInPlaceIsWrittenAgainByTheBlockThatCopiesIt() throws {
        let (course, out, before) = try Self.builtDemoCopy()
        let sheetName = "static/cm_style_guide_demox.css"
        let users = before.blocks.filter { $0.files?[sheetName] != nil && $0.type == "html" }
        let sheet = try #require(users.first?.files?[sheetName])
        let published = try #require(before.files?[sheet])
        #expect(published.encoding == .gzip)
        let path = out + "/" + published.path(sha256: sheet)
        var bytes = TestSupport.read(path)
        bytes[0] ^= 0xFF  // the gzip magic: the same size, no longer a member this store wrote
        try TestSupport.writeBytes(bytes, to: path)
        // As if the damage were older than the manifest (a disk's, not an edit's).
        var times = [timespec(tv_sec: time(nil) + 5, tv_nsec: 0), timespec(tv_sec: time(nil) + 5, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, out + "/manifest.json", &times, 0) == 0)

        let edited = try #require(users.first)
        let urlName = try #require(edited.usageID.split(separator: "@").last.map(String.init))
        let page = course + "/html/" + urlName + ".html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("\n<p>Corrected.</p>\n".utf8), to: page)
        let (_, report) = try build(course, into: out, publishedAt: "2026-11-23T10:00:00Z", now: TestSupport.clockAhead)
        #expect(report.errors == [])
        #expect(report.counts.built == 1 && report.counts.rendered == 1, "the other \(users.count - 1) users of the sheet are reused, not rendered")
        #expect(TestSupport.read(path) != bytes, "the damaged content is written again")
        #expect(try PublishVerifier.verify(folder: out).problems.map(\.message) == [])
        let python = try #require(TestSupport.which("python3"))
        let result = try TestSupport.run(python, ["-c", Self.independentCheck, out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").dropFirst().isEmpty, "\(result.stdout)")
    }

    @Test func noOpRebuildLeavesPublishedContentsUntouched() throws {
        let out = TestSupport.temporaryFolder("out")
        _ = try build(Self.demo, into: out, now: TestSupport.clockAhead)
        let first = Self.contentStamps(out)
        let manifestBefore = TestSupport.read(out + "/manifest.json")
        #expect(first.count > 100)
        _ = try build(Self.demo, into: out, publishedAt: "2026-11-23T10:00:00Z", now: TestSupport.clockAhead)
        #expect(Self.contentStamps(out) == first)
        #expect(TestSupport.read(out + "/manifest.json") == manifestBefore)
        // Without the state folder the build renders every block again: still nothing rewritten.
        var options = try BuildOptions(outputFolder: out, publishedAt: "2026-11-24T10:00:00Z", jobs: 2)
        try FileManager.default.removeItem(atPath: options.stateFolder)
        options.now = TestSupport.clockAhead
        let report = try CoursePackager(options: options).build(coursePath: Self.demo)
        #expect(report.counts.rendered > 200)
        #expect(Self.contentStamps(out) == first)
        #expect(TestSupport.read(out + "/manifest.json") == manifestBefore)
    }
}
