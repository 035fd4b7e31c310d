import FileSystem
import Manifest
import Foundation
import SafeText
import Testing
import TestSupport
import ZlibStream

@testable import SyncClient

/// What a hostile or damaged device folder can plant where the client writes, and text that
/// reaches HTML from a manifest or an LMS.
struct PlantedNamesTests {
    /// `DurableFile.replace` writes through a temporary name of its own: a FIFO there would
    /// block the open, a hard link would send the bytes into another file, a folder would refuse
    /// the write on every sync.
    @Test func whateverIsPlantedAtTheTemporaryNameIsNeverWrittenThrough() throws {
        let folder = TestSupport.temporaryFolder("planted")
        let page = folder + "/1.html"
        let temporary = DurableFile.temporaryPath(beside: page, unique: false)
        let victim = folder + "/victim"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))

        #expect(mkfifo(temporary, 0o644) == 0)
        try DurableFile.replace(page, with: Array("fifo".utf8), synced: false)
        #expect(TestSupport.read(page) == Array("fifo".utf8))

        #expect(link(victim, temporary) == 0)
        try DurableFile.replace(page, with: Array("hard link".utf8), synced: false)
        #expect(TestSupport.read(page) == Array("hard link".utf8))
        #expect(TestSupport.read(victim) == Array("keep me".utf8), "the linked file is untouched")

        try FileManager.default.createDirectory(atPath: temporary + "/inside", withIntermediateDirectories: true)
        try DurableFile.replace(page, with: Array("folder".utf8), synced: false)
        #expect(TestSupport.read(page) == Array("folder".utf8))
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: folder)).contains { $0.contains(".tmp-") && $0 != (temporary as NSString).lastPathComponent })
    }

    /// Where the file system refuses links (the store on another device here: tmpfs), a linked
    /// folder holds copies, and a batch counts their bytes toward its cap; links count nothing.
    @Test func aLinkedFolderOfCopiesCountsTheirBytes() throws {
        let key = String(repeating: "ab", count: 32)
        func store(in folder: String) throws -> ContentStore {
            let store = ContentStore(folder: folder)
            try FileManager.default.createDirectory(atPath: DurableFile.folder(of: store.path(of: key)), withIntermediateDirectories: true)
            try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: store.path(of: key)))
            return store
        }
        let listing: FileListing = ["index.html": key, "static/a.png": key]
        let elsewhere = try store(in: "/dev/shm/coursepack-store-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(atPath: elsewhere.folder) }
        let folder = TestSupport.temporaryFolder("linked")
        try FileManager.default.createDirectory(atPath: folder + "/html", withIntermediateDirectories: true)
        #expect(try LinkedFolder(root: folder + "/html/copies", synced: false).build(listing, store: elsewhere, overflow: OverflowCopies()) == 10_000)
        let beside = try store(in: folder + "/store")
        #expect(try LinkedFolder(root: folder + "/html/links", synced: false).build(listing, store: beside, overflow: OverflowCopies()) == 0)
    }

    /// A quote followed by a combining mark is one `Character` that is not a quote, and
    /// Foundation's `replacingOccurrences` skips it; a browser still reads the quote.
    @Test func escapingIsByBytesSoACombiningMarkHidesNoQuote() {
        let hostile = "x\"\u{301} onload=alert(1) y='\u{301}<\u{301}b>&\u{301}"
        let escaped = HTMLEscape.escape(hostile)
        #expect(!escaped.utf8.contains { [UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"), UInt8(ascii: ">")].contains($0) })
        #expect(escaped == "x&quot;\u{301} onload=alert(1) y=&#39;\u{301}&lt;\u{301}b&gt;&amp;\u{301}")
        #expect(HTMLEscape.escape(hostile, "\"<") == "x&quot;\u{301} onload=alert(1) y='\u{301}&lt;\u{301}b>&\u{301}")
        #expect(HTMLEscape.escape("plain text") == "plain text")
    }

    /// The settle check reads the bytes of a file written since the sync began (a same-size
    /// write to an installed page while the sync ran), not of files older than that and than
    /// their folder.
    @Test func theSettleCheckReadsTheBytesOfFilesWrittenSinceTheSyncBegan() throws {
        let folder = TestSupport.temporaryFolder("written-since") + "/html/b"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let bytes = Array("<p>installed</p>".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/index.html"))
        var crc = CRC32()
        bytes.withUnsafeBytes { crc.update($0) }
        let inventory = BlockInventory(files: [.init(name: "index.html", size: UInt64(bytes.count), crc32: crc.value)], archiveSHA256: nil)
        // Installed an hour ago, folder and file alike.
        let hourAgo = timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)
        var times = [hourAgo, hourAgo]
        #expect(utimensat(AT_FDCWD, folder + "/index.html", &times, 0) == 0 && utimensat(AT_FDCWD, folder, &times, 0) == 0)
        let started = FileStamp.now() - 60_000_000_000
        #expect(inventory.damage(in: folder, readingBytes: false, readingBytesWrittenSince: started) == nil)

        // Written in place at the same size, after the sync began.
        let handle = try #require(FileHandle(forWritingAtPath: folder + "/index.html"))
        try handle.write(contentsOf: Data("<p>DAMAGED!</p>!".utf8))
        try handle.close()
        #expect(inventory.damage(in: folder, readingBytes: false) == nil, "sizes alone do not see it")
        #expect(inventory.damage(in: folder, readingBytes: false, readingBytesWrittenSince: started)?.contains("does not hold the bytes") == true)
        // Had it been written before the sync began (and before its folder changed), only a full check reads it.
        #expect(utimensat(AT_FDCWD, folder + "/index.html", &times, 0) == 0)
        #expect(inventory.damage(in: folder, readingBytes: false, readingBytesWrittenSince: started) == nil)
        #expect(inventory.damage(in: folder)?.contains("does not hold the bytes") == true)
    }
}
