import Manifest
import Testing
import TestSupport

@testable import SyncClient

/// `coursepack diff` and `sync` must tell the same story about two manifests.
@Suite struct ManifestDiffTests {
    func ids(_ blocks: [BlockEntry]) -> [String] { blocks.map(\.usageID) }

    @Test func blocksAreAddedChangedRemovedOrUnchanged() {
        let old = Fixture.manifest([
            Fixture.block("same"), Fixture.block("edited"), Fixture.block("gone"), Fixture.block("nowOnline", type: "video"), Fixture.onlineOnly("talk"),
        ])
        let new = Fixture.manifest([
            Fixture.block("same"), Fixture.block("edited", version: 3, size: 70), Fixture.onlineOnly("nowOnline", type: "video"), Fixture.onlineOnly("talk"),
            Fixture.block("fresh", size: 30),
        ])
        let diff = ManifestDiff(old: old, new: new)
        #expect(ids(diff.added) == [Fixture.usageID("fresh")])
        #expect(ids(diff.changed) == [Fixture.usageID("edited")])
        #expect(diff.changed.first?.size == 70, "a changed block carries the new entry")
        #expect(ids(diff.removed) == [Fixture.usageID("nowOnline", type: "video"), Fixture.usageID("gone")])
        #expect(diff.removed.first?.archive == "video/nowOnline.zip", "a removed block carries the entry whose archive goes")
        // Online-only blocks are never downloaded: listed as unchanged, whatever they were.
        #expect(ids(diff.unchanged) == [Fixture.usageID("same"), Fixture.usageID("talk", type: "discussion")])
        #expect(diff.bytesToDownload == 100)
    }

    @Test func withoutAnOldManifestEveryOfflineBlockIsAdded() {
        let diff = ManifestDiff(old: nil, new: Fixture.manifest([Fixture.block("a"), Fixture.onlineOnly("talk")]))
        #expect(ids(diff.added) == [Fixture.usageID("a")])
        #expect(ids(diff.unchanged) == [Fixture.usageID("talk", type: "discussion")])
        #expect(diff.changed.isEmpty && diff.removed.isEmpty)
    }

    @Test func aBlockThatBecomesAvailableOfflineIsAdded() {
        let diff = ManifestDiff(old: Fixture.manifest([Fixture.onlineOnly("clip", type: "video")]), new: Fixture.manifest([Fixture.block("clip", type: "video")]))
        #expect(ids(diff.added) == [Fixture.usageID("clip", type: "video")])
    }

    @Test func theSameDownloadMeansTheSameArchiveBytesContentAndPath() {
        let installed = Fixture.block("a")
        #expect(Fixture.block("a").isSameDownload(as: installed))
        var other = installed
        other.sha256 = Fixture.digest(9)
        #expect(!other.isSameDownload(as: installed), "new archive bytes")
        other = installed
        other.contentHash = Fixture.digest(9)
        #expect(!other.isSameDownload(as: installed), "new content")
        other = installed
        other.archive = "html/b.zip"
        #expect(!other.isSameDownload(as: installed), "the archive moved")
        // What a republish changes without changing the download.
        other = installed
        other.displayName = "Renamed"
        other.lastModified = "2026-12-01T00:00:00Z"
        other.parents = [Fixture.otherUnit]
        other.requiresNetwork = ["https://cdn.example.org/x.js"]
        #expect(other.isSameDownload(as: installed))
    }

    /// Random pairs of manifests: what the diff says to download and delete is what a full sync
    /// of a healthy target plans, block for block.
    @Test(arguments: 0..<200) func theDiffAndTheSyncPlanAgree(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        func randomManifest() -> CourseManifest {
            var blocks: [BlockEntry] = []
            for name in ["a", "b", "c", "d", "e", "f"] {
                switch Int.random(in: 0..<5, using: &random) {
                case 0: continue
                case 1: blocks.append(Fixture.onlineOnly(name, type: "html"))
                case 2: blocks.append(Fixture.block(name, archive: "html/\(name)-moved.zip"))
                default: blocks.append(Fixture.block(name, version: Int.random(in: 1...2, using: &random)))
                }
            }
            return Fixture.manifest(blocks.shuffled(using: &random))
        }
        let old = Bool.random(using: &random) ? randomManifest() : nil
        let new = randomManifest()
        let diff = ManifestDiff(old: old, new: new)
        let plan = SyncPlan(server: new, installed: old)
        #expect(Set(ids(diff.added)) == Set(ids(plan.new)), "added, seed \(seed)")
        #expect(Set(ids(diff.changed)) == Set(ids(plan.outdated)), "changed, seed \(seed)")
        #expect(Set(ids(diff.removed)) == Set(ids(plan.removed)), "removed, seed \(seed)")
        #expect(diff.bytesToDownload == plan.bytesToDownload, "bytes, seed \(seed)")
    }
}
