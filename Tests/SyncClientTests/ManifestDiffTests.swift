import Manifest
import Testing
import TestSupport

@testable import SyncClient

/// `coursepack diff` and `sync` must tell the same story about two manifests.
@Suite struct ManifestDiffTests {
    typealias F = ManifestFixtures

    func ids(_ blocks: [BlockEntry]) -> [String] { blocks.map(\.usageID) }

    @Test func blocksAreAddedChangedRemovedOrUnchanged() {
        let old = F.manifest([F.block("same"), F.block("edited"), F.block("gone"), F.block("nowOnline", type: "video"), F.onlineOnly("talk")])
        let new = F.manifest([
            F.block("same"), F.block("edited", version: 3, size: 70), F.onlineOnly("nowOnline", type: "video"), F.onlineOnly("talk"),
            F.block("fresh", size: 30),
        ])
        let diff = ManifestDiff(old: old, new: new)
        #expect(ids(diff.added) == [F.usageID("fresh")])
        #expect(ids(diff.changed) == [F.usageID("edited")])
        #expect(diff.changed.first?.size == 70, "a changed block carries the new entry")
        #expect(ids(diff.removed) == [F.usageID("nowOnline", type: "video"), F.usageID("gone")])
        #expect(diff.removed.first?.archive == "video/nowOnline.zip", "a removed block carries the entry whose archive goes")
        // Online-only blocks are never downloaded: listed as unchanged, whatever they were.
        #expect(ids(diff.unchanged) == [F.usageID("same"), F.usageID("talk", type: "discussion")])
        #expect(diff.bytesToDownload == 100)
    }

    @Test func withoutAnOldManifestEveryOfflineBlockIsAdded() {
        let diff = ManifestDiff(old: nil, new: F.manifest([F.block("a"), F.onlineOnly("talk")]))
        #expect(ids(diff.added) == [F.usageID("a")])
        #expect(ids(diff.unchanged) == [F.usageID("talk", type: "discussion")])
        #expect(diff.changed.isEmpty && diff.removed.isEmpty)
    }

    @Test func aBlockThatBecomesAvailableOfflineIsAdded() {
        let diff = ManifestDiff(old: F.manifest([F.onlineOnly("clip", type: "video")]), new: F.manifest([F.block("clip", type: "video")]))
        #expect(ids(diff.added) == [F.usageID("clip", type: "video")])
    }

    @Test func theSameDownloadMeansTheSameArchiveBytesContentAndPath() {
        let installed = F.block("a")
        #expect(F.block("a").isSameDownload(as: installed))
        var other = installed
        other.sha256 = F.digest(9)
        #expect(!other.isSameDownload(as: installed), "new archive bytes")
        other = installed
        other.contentHash = F.digest(9)
        #expect(!other.isSameDownload(as: installed), "new content")
        other = installed
        other.archive = "html/b.zip"
        #expect(!other.isSameDownload(as: installed), "the archive moved")
        // What a republish changes without changing the download.
        other = installed
        other.displayName = "Renamed"
        other.lastModified = "2026-12-01T00:00:00Z"
        other.parents = [F.otherUnit]
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
                case 1: blocks.append(F.onlineOnly(name, type: "html"))
                case 2: blocks.append(F.block(name, archive: "html/\(name)-moved.zip"))
                default: blocks.append(F.block(name, version: Int.random(in: 1...2, using: &random)))
                }
            }
            return F.manifest(blocks.shuffled(using: &random))
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
