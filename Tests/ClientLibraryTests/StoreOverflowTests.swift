import ClientTarget
import FileSystem
import Foundation
import Manifest
import SyncClient
import Testing
import TestSupport

/// Each byte once past the file system's cap on links to one file (ext4: 65,000): a course of
/// more folders than that shares `coursepack.css` in all of them, and each folder past the cap
/// got a copy of its own (103,000 copies, 650 MB, at 100,000 blocks). A sync now links them to
/// an overflow copy in the store instead. The cap is reached for real: the content is linked
/// from a scratch folder until the file system refuses.
@Suite(.serialized) struct StoreOverflowTests {
    /// Links `path` from `folder` until the file system refuses one more link; the count made,
    /// nil when it never refused (no cap below `limit`).
    static func exhaustLinks(to path: String, in folder: String, limit: Int = 200_000) throws -> Int? {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for index in 0..<limit where link(path, folder + "/\(index)") != 0 {
            #expect(errno == EMLINK, "link failed with \(String(cString: strerror(errno)))")
            return index
        }
        return nil
    }

    static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    @Test func pastTheLinkCapAFolderLinksAnOverflowCopyAndTheStoreDropsItOnceUnlinked() async throws {
        let folder = TestSupport.temporaryFolder("store-overflow")
        let published = try SplitManifestSyncTests.build(into: folder)
        let target = SettledSyncTests.Target(source: published, root: folder + "/device")
        let first = try await target.sync()
        let course = target.root + "/" + first.courseFolder
        let manifest = try #require(try ManifestFile.read(course + "/manifest.json"))
        let block = try #require(manifest.blocks.first { $0.isOffline && $0.type == "html" && $0.files?["coursepack.css"] != nil })
        let key = try #require(block.files?["coursepack.css"])
        let blockFolder = course + "/" + (try #require(block.archive.flatMap(ArchivePath.installFolder(of:))))
        let installed = blockFolder + "/coursepack.css"
        let bytes = try #require(FileManager.default.contents(atPath: installed))
        let store = ContentStore.folder(ofTarget: target.root)
        let content = store + "/" + key.prefix(2) + "/" + key
        let overflow = content + ".1"

        let scratch = folder + "/links"
        guard let made = try Self.exhaustLinks(to: content, in: scratch) else {
            Issue.record("the file system of \(folder) took 200,000 links to one file: no cap to test the overflow against")
            return
        }
        print("the file system refused link \(made + 1) to one file")

        // The block installed again past the cap links an overflow copy, not a copy of its own
        // (its removal freed a link: taken too).
        try FileManager.default.removeItem(atPath: blockFolder)
        #expect(try Self.exhaustLinks(to: content, in: scratch + "-more") == 1)
        let repaired = try await target.sync()
        #expect(repaired.summary?.failures.isEmpty == true)
        let file = try #require(Self.status(installed))
        let copy = try #require(Self.status(overflow), "no overflow copy in the store")
        #expect(file.st_ino == copy.st_ino && file.st_nlink == 2, "the folder's file is a link to the overflow copy")
        #expect(FileManager.default.contents(atPath: installed) == bytes)
        #expect(try await target.sync().summary?.settledBlocks != nil, "a folder linked to an overflow copy settles")
        #expect(Self.status(overflow) != nil, "kept while a folder links it")

        // Below the cap again, the folder links the content itself and the copy goes.
        try FileManager.default.removeItem(atPath: scratch)
        try FileManager.default.removeItem(atPath: scratch + "-more")
        try FileManager.default.removeItem(atPath: blockFolder)
        #expect(try await target.sync().summary?.failures.isEmpty == true)
        #expect(Self.status(installed)?.st_ino == Self.status(content)?.st_ino)
        #expect(Self.status(overflow) == nil, "an overflow copy no folder links is dropped")
    }
}
