import ClientTarget
import Foundation
import FileSystem
import Manifest
import SyncClient
import Testing
import TestSupport

/// One block found without decoding the course's manifest (hostile pass finding F6: at 92,000
/// blocks `open` took 5.8 s and an answer posted to `serve` decoded the manifest twice): the
/// table the sync keeps answers only for the manifest whose bytes it was made from.
@Suite struct BlockLocationsTests {
    /// The demo course synced from a folder; its course root and local manifest.
    static func syncedDemo() throws -> (root: String, manifest: CourseManifest) {
        let folder = TestSupport.temporaryFolder("locations")
        let built = try TestSupport.coursepack(["build", TestSupport.demoCourse, "--out", folder + "/published", "-q"])
        #expect(built.status == 0, "\(built.stderr)")
        let synced = try TestSupport.coursepack(["sync", folder + "/published", "--to", folder + "/device"])
        #expect(synced.status == 0, "\(synced.stderr)")
        let folders = try ClientTarget(root: folder + "/device").courseFolders()
        let root = try #require(folders.first)
        return (root, try #require(try ManifestFile.read(root + "/manifest.json")))
    }

    static func expected(_ block: BlockEntry) -> BlockLocations.Location {
        BlockLocations.Location(
            offline: block.isOffline, folder: block.isOffline ? block.archive.flatMap(ArchivePath.installFolder) : nil,
            contentHash: block.contentHash, reason: block.reason)
    }

    @Test func theSyncKeepsATableThatAnswersForEveryBlockAsTheManifestDoes() throws {
        let (root, manifest) = try Self.syncedDemo()
        let table = root + "/.coursepack-sync/" + BlockLocations.fileName
        #expect(FileManager.default.fileExists(atPath: table), "the sync wrote the table with the manifest")
        let before = TestSupport.read(table)
        #expect(manifest.blocks.contains { !$0.isOffline } && manifest.blocks.contains(where: \.isOffline))
        for block in manifest.blocks {
            #expect(BlockLocations.location(of: block.usageID, courseRoot: root) == Self.expected(block), "\(block.usageID)")
        }
        #expect(BlockLocations.location(of: "block-v1:OpenedX+DemoX+DemoCourse+type@html+block@nope", courseRoot: root) == nil)
        #expect(BlockLocations.location(of: "block-v1:x\ttab", courseRoot: root) == nil)
        #expect(TestSupport.read(table) == before, "lookups read the table, never rewrite it")
    }

    /// A manifest replaced without its table (another writer, a restored backup, a sync that
    /// stopped between the two) is answered from its own bytes, and the table is made again.
    @Test func aTableOfAnotherManifestIsNeverBelieved() throws {
        let (root, manifest) = try Self.syncedDemo()
        let table = root + "/.coursepack-sync/" + BlockLocations.fileName
        let stale = TestSupport.read(table)
        var changed = manifest
        let first = try #require(changed.blocks.firstIndex { $0.isOffline })
        let gone = changed.blocks.remove(at: first)
        let second = try #require(changed.blocks.firstIndex { $0.isOffline })
        changed.blocks[second].offline = false
        changed.blocks[second].reason = "needs the network now"
        try ManifestFile.write(changed, to: root + "/manifest.json")
        #expect(TestSupport.read(table) == stale)

        #expect(BlockLocations.location(of: gone.usageID, courseRoot: root) == nil, "a block the manifest no longer lists")
        let now = try #require(BlockLocations.location(of: changed.blocks[second].usageID, courseRoot: root))
        #expect(!now.offline && now.folder == nil && now.reason == "needs the network now")
        #expect(TestSupport.read(table) != stale, "the table was made again for the new manifest")
        for block in changed.blocks.prefix(50) {
            #expect(BlockLocations.location(of: block.usageID, courseRoot: root) == Self.expected(block))
        }
    }

    /// A table cut short at a line (written without a sync: a power cut may keep a part of it)
    /// is not believed: a block its lost lines held is still found.
    @Test func aTableCutShortIsNotBelieved() throws {
        let (root, manifest) = try Self.syncedDemo()
        let table = root + "/.coursepack-sync/" + BlockLocations.fileName
        let lines = String(decoding: TestSupport.read(table), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        try TestSupport.write([BlockLocations.fileName: lines.prefix(100).joined(separator: "\n") + "\n"], under: root + "/.coursepack-sync")
        let last = try #require(manifest.blocks.last)
        #expect(BlockLocations.location(of: last.usageID, courseRoot: root) == Self.expected(last))
    }

    /// Names a line-based table cannot hold (a hostile server's reason with a line break) make
    /// no table: the course is decoded for every lookup, and answered right.
    @Test func fieldsThatWouldBreakALineMakeNoTable() throws {
        let (root, manifest) = try Self.syncedDemo()
        let table = root + "/.coursepack-sync/" + BlockLocations.fileName
        var changed = manifest
        let index = try #require(changed.blocks.firstIndex { !$0.isOffline })
        changed.blocks[index].reason = "online only\n00000000\t1\thtml/forged\t\t"
        try ManifestFile.write(changed, to: root + "/manifest.json")
        let found = try #require(BlockLocations.location(of: changed.blocks[index].usageID, courseRoot: root))
        #expect(found == Self.expected(changed.blocks[index]))
        #expect(!FileManager.default.fileExists(atPath: table), "no table for a manifest it cannot hold")
        #expect(BlockLocations.location(of: "00000000", courseRoot: root) == nil)
    }
}
