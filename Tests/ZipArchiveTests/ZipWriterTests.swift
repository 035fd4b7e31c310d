import Foundation
import Testing
import TestSupport
import ZipArchive
import ZlibStream

/// A random tree of files: empty, large, text, incompressible, unicode and nested names.
func randomTree(seed: UInt64, under root: String) throws -> [String] {
    var rng = SeededGenerator(state: seed)
    let words = ["course", "block", "video", "manifest", "offline", "lesson", "quiz", "ünïcødé", "日本語", "name with space"]
    var names: [String] = []
    for index in 0..<Int.random(in: 5...25, using: &rng) {
        let depth = Int.random(in: 0...3, using: &rng)
        let folders = (0..<depth).map { _ in words.randomElement(using: &rng)! }
        let ext = ["txt", "html", "css", "png", "mp4", "json", "bin"].randomElement(using: &rng)!
        let name = (folders + ["\(words.randomElement(using: &rng)!)-\(index).\(ext)"]).joined(separator: "/")
        let size: Int
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: size = 0
        case 1: size = Int.random(in: 300_000...1_200_000, using: &rng)
        default: size = Int.random(in: 1...20_000, using: &rng)
        }
        var bytes = [UInt8](repeating: 0, count: size)
        let compressible = Bool.random(using: &rng)
        for i in 0..<size {
            bytes[i] = compressible ? UInt8(ascii: "a") + UInt8((i / 7) % 26) : UInt8.random(in: 0...255, using: &rng)
        }
        try TestSupport.writeBytes(bytes, to: root + "/" + name)
        names.append(name)
    }
    return names
}

@Suite struct ZipWriterTests {
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomTreesAreReadByUnzipAndPythonWithIdenticalContent(seed: UInt64) throws {
        let root = TestSupport.temporaryFolder("tree")
        let names = try randomTree(seed: seed, under: root)
        let archive = TestSupport.temporaryFolder("zip") + "/tree.zip"
        try ZipWriter().write(names.map { ZipEntry(name: $0, source: .file(path: root + "/" + $0)) }, to: archive)

        #expect(try TestSupport.independentZipCheck([archive]) == [])
        let compare = """
            import sys, zipfile, os
            archive, root = sys.argv[1], sys.argv[2]
            with zipfile.ZipFile(archive) as z:
                names = z.namelist()
                assert names == sorted(names, key=lambda n: n.encode()), "entries not sorted"
                for info in z.infolist():
                    with open(os.path.join(root, info.filename), "rb") as f:
                        assert z.read(info) == f.read(), info.filename
                    assert info.date_time == (1980, 1, 1, 0, 0, 0), info.date_time
                    assert info.flag_bits & 0x800, "UTF-8 flag missing"
                    assert info.extra == b"", "unexpected extra field"
                print(len(names))
            """
        let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", compare, archive, root])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(names.count)")
    }

    /// The bytes handed to the observer are the archive's bytes, in order, whenever the writer
    /// says so; entries that fit the write buffer (incompressible text retried as stored
    /// included) never make it say otherwise. When it does say otherwise, the observed bytes
    /// are compared with the file too: they differ only in the headers patched after their
    /// entry streamed through, or (an entry retried as stored) by bytes dropped from the file.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64], [true, false])
    func observedBytesAreTheArchiveBytes(seed: UInt64, unnamedFiles: Bool) throws {
        let root = TestSupport.temporaryFolder("tree")
        let names = try randomTree(seed: seed, under: root)
        let archive = TestSupport.temporaryFolder("zip") + "/tree.zip"
        var observed: [UInt8] = []
        let written = try ZipWriter(unnamedFiles: unnamedFiles).write(names.map { ZipEntry(name: $0, source: .file(path: root + "/" + $0)) }, to: archive) {
            observed.append(contentsOf: $0)
        }
        let bytes = TestSupport.read(archive)
        #expect(written.size == UInt64(bytes.count))
        let largest = names.map { TestSupport.read(root + "/" + $0).count }.max() ?? 0
        if largest < 200_000 { #expect(written.observedAll, "small entries are patched before they leave the buffer") }
        if written.observedAll {
            #expect(observed == bytes)
            return
        }
        #expect(largest >= 256 * 1024, "only an entry larger than the write buffer is patched on disk")
        if observed.count == bytes.count {
            let patchable = try patchedHeaderFields(archive)
            let differing = observed.indices.filter { observed[$0] != bytes[$0] }
            #expect(!differing.isEmpty, "the writer said the bytes differ")
            #expect(differing.allSatisfy { index in patchable.contains { $0.contains(index) } }, "bytes differ outside the patched headers: \(differing.prefix(5))")
        } else {
            #expect(observed.count > bytes.count, "an entry retried as stored drops bytes from the file, never adds")
        }
    }

    @Test func smallStreamedEntriesAreObservedExactlyAndLargeOnesAreFlagged() throws {
        var rng = SeededGenerator(state: 11)
        let root = TestSupport.temporaryFolder("tree")
        try TestSupport.writeBytes((0..<30_000).map { _ in UInt8.random(in: 0...255, using: &rng) }, to: root + "/noise.txt")
        try TestSupport.writeBytes(Array(String(repeating: "<p>page</p>", count: 3000).utf8), to: root + "/page.html")
        try TestSupport.writeBytes([0x89, 0x50, 0x4E, 0x47, 9, 9, 9], to: root + "/logo.png")
        let out = TestSupport.temporaryFolder("zip")
        func write(_ names: [String], to archive: String) throws -> (observed: [UInt8], all: Bool) {
            var observed: [UInt8] = []
            let written = try ZipWriter().write(names.map { ZipEntry(name: $0, source: .file(path: root + "/" + $0)) }, to: archive) {
                observed.append(contentsOf: $0)
            }
            return (observed, written.observedAll)
        }
        let small = try write(["noise.txt", "page.html", "logo.png"], to: out + "/small.zip")
        #expect(small.all)
        #expect(small.observed == TestSupport.read(out + "/small.zip"))

        try TestSupport.writeBytes((0..<600_000).map { _ in UInt8.random(in: 0...255, using: &rng) }, to: root + "/big.bin")
        let big = try write(["big.bin", "page.html"], to: out + "/big.zip")
        #expect(!big.all, "the header of an entry larger than the buffer is patched on disk")
        #expect(try TestSupport.independentZipCheck([out + "/big.zip"]) == [])
    }

    /// Media larger than the write buffer and than one mapping window is written header first,
    /// so an observer sees the final bytes and nobody reads the archive back to hash it; a
    /// checksum from an earlier pass gives the same bytes, and one gone stale (the file was
    /// rewritten since) is not trusted.
    @Test func largeMediaIsObservedWholeAndKnownChecksumsGiveTheSameBytes() throws {
        var rng = SeededGenerator(state: 23)
        let root = TestSupport.temporaryFolder("tree")
        let video = root + "/clip.mp4"
        try TestSupport.writeBytes((0..<9_000_000).map { _ in UInt8.random(in: 0...255, using: &rng) }, to: video)
        try TestSupport.writeBytes(Array(String(repeating: "<p>page</p>", count: 3000).utf8), to: root + "/index.html")
        let out = TestSupport.temporaryFolder("zip")
        func write(_ source: ZipEntry.Source, to archive: String) throws -> (observed: [UInt8], all: Bool) {
            var observed: [UInt8] = []
            let entries = [ZipEntry(name: "index.html", source: .file(path: root + "/index.html")), ZipEntry(name: "static/clip.mp4", source: source)]
            let written = try ZipWriter().write(entries, to: archive) { observed.append(contentsOf: $0) }
            return (observed, written.observedAll)
        }
        let streamed = try write(.file(path: video), to: out + "/streamed.zip")
        #expect(streamed.all)
        #expect(streamed.observed == TestSupport.read(out + "/streamed.zip"))
        #expect(try TestSupport.independentZipCheck([out + "/streamed.zip"]) == [])

        var hashedBytes = 0
        let checksum = try FileSweep.sweep(video) { hashedBytes += $0.count }
        #expect(hashedBytes == 9_000_000 && checksum.size == 9_000_000)
        #expect(checksum.crc32 == CRC32.checksum(TestSupport.read(video)))
        let known = try write(.checkedFile(path: video, checksum), to: out + "/known.zip")
        #expect(known.all)
        #expect(TestSupport.read(out + "/known.zip") == TestSupport.read(out + "/streamed.zip"))

        var changed = TestSupport.read(video)
        changed[4_500_000] ^= 0xFF
        try TestSupport.writeBytes(changed, to: video)
        _ = try write(.checkedFile(path: video, checksum), to: out + "/stale.zip")
        #expect(try TestSupport.independentZipCheck([out + "/stale.zip"]) == [], "a stale checksum is not written into the header")
    }

    @Test func sameTreeWithOtherModificationTimesGivesIdenticalBytes() throws {
        let root = TestSupport.temporaryFolder("tree")
        let names = try randomTree(seed: 42, under: root)
        let out = TestSupport.temporaryFolder("zip")
        let entries = names.map { ZipEntry(name: $0, source: .file(path: root + "/" + $0)) }
        try ZipWriter().write(entries, to: out + "/a.zip")
        for name in names {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: root + "/" + name)
        }
        try ZipWriter().write(entries.reversed(), to: out + "/b.zip")
        #expect(TestSupport.read(out + "/a.zip") == TestSupport.read(out + "/b.zip"))
    }

    @Test func fileBytesAndPreparedSourcesGiveIdenticalArchives() throws {
        let root = TestSupport.temporaryFolder("tree")
        let text = Array(String(repeating: "offline course content ", count: 2000).utf8)
        try TestSupport.writeBytes(text, to: root + "/page.html")
        let out = TestSupport.temporaryFolder("zip")
        let writer = ZipWriter()
        try writer.write([ZipEntry(name: "page.html", source: .file(path: root + "/page.html"))], to: out + "/file.zip")
        try writer.write([ZipEntry(name: "page.html", source: .bytes(text))], to: out + "/bytes.zip")
        try writer.write([ZipEntry(name: "page.html", source: .prepared(try writer.prepare(text, name: "page.html")))], to: out + "/prepared.zip")
        #expect(TestSupport.read(out + "/file.zip") == TestSupport.read(out + "/bytes.zip"))
        #expect(TestSupport.read(out + "/file.zip") == TestSupport.read(out + "/prepared.zip"))
    }

    /// An entry copied from a published gzip member (its deflate stream and CRC-32) is the same
    /// archive as one compressed in place; a source shorter than it says is an error, never a
    /// truncated entry. Python's gzip reads the member independently.
    @Test func anEntryCopiedFromAGzipMemberEqualsOneCompressedInPlace() throws {
        let text = Array(String(repeating: "offline course content ", count: 2000).utf8)
        let writer = ZipWriter()
        let prepared = try writer.prepare(text, name: "page.html")
        #expect(prepared.method == .deflated)
        let root = TestSupport.temporaryFolder("gz")
        let member = GzipMember.header + prepared.payload + GzipMember.trailer(crc32: prepared.crc32, size: UInt64(text.count))
        try TestSupport.writeBytes(member, to: root + "/page.gz")
        let python = try #require(TestSupport.which("python3"))
        let decoded = try TestSupport.run(python, ["-c", "import gzip,sys; sys.stdout.write(str(len(gzip.open(sys.argv[1]).read())))", root + "/page.gz"])
        #expect(decoded.stdout == "\(text.count)")
        let copied = CopiedEntry(
            path: root + "/page.gz", offset: UInt64(GzipMember.header.count), method: .deflated, crc32: prepared.crc32,
            compressedSize: prepared.compressedSize, uncompressedSize: UInt64(text.count))
        let out = TestSupport.temporaryFolder("zip")
        try writer.write([ZipEntry(name: "page.html", source: .bytes(text))], to: out + "/bytes.zip")
        try writer.write([ZipEntry(name: "page.html", source: .copied(copied))], to: out + "/copied.zip")
        #expect(TestSupport.read(out + "/bytes.zip") == TestSupport.read(out + "/copied.zip"))
        let short = CopiedEntry(
            path: root + "/page.gz", offset: UInt64(member.count - 4), method: .deflated, crc32: prepared.crc32,
            compressedSize: prepared.compressedSize, uncompressedSize: UInt64(text.count))
        #expect(throws: ZipError.self) { try writer.write([ZipEntry(name: "page.html", source: .copied(short))], to: out + "/short.zip") }
        #expect(!FileManager.default.fileExists(atPath: out + "/short.zip"))
    }

    @Test func mediaIsStoredTextDeflatedAndIncompressibleTextStored() throws {
        var rng = SeededGenerator(state: 7)
        let noise = (0..<50_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let text = Array(String(repeating: "<p>hello</p>\n", count: 1000).utf8)
        let out = TestSupport.temporaryFolder("zip")
        try ZipWriter().write([
            ZipEntry(name: "a.png", source: .bytes(text)),
            ZipEntry(name: "b.html", source: .bytes(text)),
            ZipEntry(name: "c.txt", source: .bytes(noise)),
            ZipEntry(name: "d.txt", source: .bytes([])),
        ], to: out + "/m.zip")
        let script = """
            import sys, zipfile
            print(" ".join(f"{i.filename}={i.compress_type}" for i in zipfile.ZipFile(sys.argv[1]).infolist()))
            """
        let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, out + "/m.zip"])
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "a.png=0 b.html=8 c.txt=0 d.txt=0")
    }

    /// The archive format is a contract: a change to these bytes is a change of format. One
    /// entry is deflated (zlib's output at level 6 is part of the contract; a zlib that
    /// deflates differently changes the bytes, not the content_hash), one stored.
    @Test func pinnedArchiveDigest() throws {
        let out = TestSupport.temporaryFolder("zip")
        let page = "<!DOCTYPE html><p>Hello, offline world.</p>\n" + String(repeating: "<p>Offline pages compress well.</p>\n", count: 20)
        let size = try ZipWriter().write([
            ZipEntry(name: "index.html", source: .bytes(Array(page.utf8))),
            ZipEntry(name: "static/logo.png", source: .bytes([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])),
        ], to: out + "/pinned.zip")
        let bytes = TestSupport.read(out + "/pinned.zip")
        #expect(UInt64(bytes.count) == size)
        #expect(try TestSupport.independentZipCheck([out + "/pinned.zip"]) == [])
        let methods = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", """
            import sys, zipfile
            print(" ".join(f"{i.filename}={i.compress_type}" for i in zipfile.ZipFile(sys.argv[1]).infolist()))
            """, out + "/pinned.zip"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(methods == "index.html=8 static/logo.png=0", "one deflated entry, one stored")
        #expect(bytes.count == PinnedArchive.size && CRC32.checksum(bytes) == PinnedArchive.crc32,
                "archive CRC-32 is \(String(CRC32.checksum(bytes), radix: 16)); size \(bytes.count)")
    }

    @Test(arguments: ["../evil", "/etc/passwd", "a\\b", "a\u{0}b", "C:/x", "a//b", "a/./b", "a/", ""])
    func unsafeNamesAreRefused(name: String) throws {
        let out = TestSupport.temporaryFolder("zip")
        #expect(throws: ZipError.self) {
            try ZipWriter().write([ZipEntry(name: name, source: .bytes([1]))], to: out + "/x.zip")
        }
        #expect(TestSupport.files(under: out) == [], "nothing, not even a temporary file, is left behind")
    }

    @Test func duplicateNamesAreRefused() throws {
        let out = TestSupport.temporaryFolder("zip")
        #expect(throws: ZipError.duplicateEntry("a.txt")) {
            try ZipWriter().write([ZipEntry(name: "a.txt", source: .bytes([1])), ZipEntry(name: "a.txt", source: .bytes([2]))], to: out + "/x.zip")
        }
    }

    /// Both ways of naming a finished archive: replacing an existing one is atomic, and a
    /// failed write leaves the previous file and nothing else.
    @Test(arguments: [true, false])
    func aFailedWriteKeepsThePreviousArchive(unnamedFiles: Bool) throws {
        let out = TestSupport.temporaryFolder("zip")
        let writer = ZipWriter(unnamedFiles: unnamedFiles)
        try writer.write([ZipEntry(name: "a.txt", source: .bytes([1, 2, 3]))], to: out + "/x.zip")
        let first = TestSupport.read(out + "/x.zip")
        try writer.write([ZipEntry(name: "a.txt", source: .bytes([1, 2, 3, 4]))], to: out + "/x.zip")
        let before = TestSupport.read(out + "/x.zip")
        #expect(before != first, "the second write replaced the first")
        #expect(try TestSupport.independentZipCheck([out + "/x.zip"]) == [])
        #expect(TestSupport.files(under: out) == ["x.zip"], "the replaced archive left no temporary name behind")
        #expect(throws: ZipError.self) {
            try writer.write([
                ZipEntry(name: "a.txt", source: .bytes([4])),
                ZipEntry(name: "b.txt", source: .file(path: out + "/does-not-exist")),
            ], to: out + "/x.zip")
        }
        #expect(TestSupport.read(out + "/x.zip") == before)
        #expect(TestSupport.files(under: out) == ["x.zip"])
    }
}

enum PinnedArchive {
    static let size = 306
    static let crc32: UInt32 = 0x9ffd_7dd8
}

/// Byte ranges of each local header's CRC-32 and sizes (and ZIP64 sizes), the fields the
/// writer patches once an entry has streamed through.
func patchedHeaderFields(_ archive: String) throws -> [Range<Int>] {
    let script = """
        import sys, zipfile
        for i in zipfile.ZipFile(sys.argv[1]).infolist():
            print(i.header_offset, len(i.filename.encode()))
        """
    let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, archive])
    return result.stdout.split(separator: "\n").flatMap { line -> [Range<Int>] in
        let parts = line.split(separator: " ").compactMap { Int($0) }
        guard parts.count == 2 else { return [] }
        let offset = parts[0]
        // CRC and both sizes at 14..<26; a ZIP64 extra field follows the name.
        return [offset + 14..<offset + 26, offset + 30 + parts[1]..<offset + 30 + parts[1] + 20]
    }
}
