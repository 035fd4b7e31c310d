import Manifest
import Testing

@testable import SyncClient

/// What a sync decides from the installed manifest and the server's, before any download.
@Suite struct SyncPlanTests {
    typealias F = ManifestFixtures

    func ids(_ blocks: [BlockEntry]) -> [String] { blocks.map(\.usageID) }

    @Test func eachBlockIsNewOutdatedRemovedOrUnchanged() {
        let installed = F.manifest([
            F.block("same"), F.block("edited"), F.block("moved"), F.block("gone"), F.block("nowOnline", type: "video"),
        ])
        let server = F.manifest([
            F.block("same"), F.block("edited", version: 2), F.block("moved", archive: "html/moved2.zip"),
            F.onlineOnly("nowOnline", type: "video"), F.block("fresh", size: 40), F.onlineOnly("talk"),
        ])
        let plan = SyncPlan(server: server, installed: installed)
        #expect(ids(plan.unchanged) == [F.usageID("same")])
        #expect(ids(plan.outdated) == [F.usageID("edited"), F.usageID("moved")])
        #expect(ids(plan.new) == [F.usageID("fresh")])
        // A block the server now lists as online-only goes, as does one it no longer lists.
        #expect(ids(plan.removed) == [F.usageID("gone"), F.usageID("nowOnline", type: "video")])
        #expect(ids(plan.downloads) == [F.usageID("fresh"), F.usageID("edited"), F.usageID("moved")])
        // Outdated blocks carry the server's entry, the one to download.
        #expect(plan.outdated.first?.sha256 == F.digest(2))
        #expect(plan.bytesToDownload == 40 + 100 + 100)
        #expect(plan.bytesToDelete == 200)
    }

    @Test func withNothingInstalledEveryOfflineBlockIsNew() {
        let server = F.manifest([F.block("a"), F.onlineOnly("talk"), F.block("b", type: "problem")])
        let plan = SyncPlan(server: server, installed: nil)
        #expect(ids(plan.new) == [F.usageID("a"), F.usageID("b", type: "problem")])
        #expect(plan.outdated.isEmpty && plan.removed.isEmpty && plan.unchanged.isEmpty)
    }

    @Test func anInstalledBlockWhoseFolderIsMissingIsDownloadedAgain() {
        let both = F.manifest([F.block("kept"), F.block("damaged")])
        let plan = SyncPlan(server: both, installed: both) { $0.usageID != F.usageID("damaged") }
        #expect(ids(plan.unchanged) == [F.usageID("kept")])
        #expect(ids(plan.outdated) == [F.usageID("damaged")])
    }

    @Test func aSelectionChoosesBlocksByIdOrByAnyEnclosingContainer() {
        let server = F.manifest([
            F.block("a"), F.block("b", parents: [F.otherUnit]), F.block("c", parents: [F.otherUnit]), F.block("d"),
        ])
        let byContainer = SyncPlan(server: server, installed: nil, selection: [F.otherUnit])
        #expect(ids(byContainer.new) == [F.usageID("b"), F.usageID("c")])
        let byBlock = SyncPlan(server: server, installed: nil, selection: [F.usageID("d")])
        #expect(ids(byBlock.new) == [F.usageID("d")])
    }

    @Test func installedBlocksOutsideTheSelectionAreStillUpdatedAndNeverRemovedForIt() {
        let installed = F.manifest([F.block("a"), F.block("b")])
        let server = F.manifest([F.block("a", version: 2), F.block("b"), F.block("c")])
        let plan = SyncPlan(server: server, installed: installed, selection: [F.usageID("c")])
        #expect(ids(plan.outdated) == [F.usageID("a")])
        #expect(ids(plan.unchanged) == [F.usageID("b")])
        #expect(ids(plan.new) == [F.usageID("c")])
        #expect(plan.removed.isEmpty)
    }

    @Test func anEmptySelectionThatMeansNoneUpdatesWhatIsInstalledAndAddsNothing() {
        let installed = F.manifest([F.block("a")])
        let server = F.manifest([F.block("a", version: 2), F.block("b")])
        let plan = SyncPlan(server: server, installed: installed, emptySelectionMeansAll: false)
        #expect(ids(plan.outdated) == [F.usageID("a")])
        #expect(plan.new.isEmpty)
    }

    /// The local manifest keeps the server's online-only entries (so a client can offer "open
    /// online"); such an entry is not an installed block, and must not make its block count as
    /// installed once the server offers it offline: a target's selection (its budget) decides.
    @Test func aBlockThatBecomesAvailableOfflineIsNewAndFollowsTheSelection() {
        let installed = F.manifest([F.block("a"), F.onlineOnly("clip", type: "video")])
        let server = F.manifest([F.block("a"), F.block("clip", type: "video")])
        let chosen = SyncPlan(server: server, installed: installed)
        #expect(ids(chosen.new) == [F.usageID("clip", type: "video")])
        #expect(chosen.outdated.isEmpty)
        let notChosen = SyncPlan(server: server, installed: installed, selection: [F.usageID("a")])
        #expect(notChosen.downloads.isEmpty, "a block outside the selection was planned: \(ids(notChosen.downloads))")
        let noRoom = SyncPlan(server: server, installed: installed, emptySelectionMeansAll: false)
        #expect(noRoom.downloads.isEmpty, "a target with no room got a new block: \(ids(noRoom.downloads))")
    }

    @Test func theRuntimeComesWithTheSelectedOrInstalledPagesThatLoadItAndOnlyThen() {
        let runtime = F.runtime()
        let server = SyncClient.withRuntimeEntry(F.manifest([
            F.block("math", runtime: runtime.archive), F.block("plain", parents: [F.otherUnit]),
        ], runtime: runtime))
        #expect(server.blocks.last?.type == "runtime" && server.blocks.last?.archive == runtime.archive)
        let runtimeID = SyncClient.runtimeID(runtime)

        #expect(ids(SyncPlan(server: server, installed: nil).new) == [F.usageID("math"), F.usageID("plain"), runtimeID])
        #expect(ids(SyncPlan(server: server, installed: nil, selection: [F.otherUnit]).new) == [F.usageID("plain")])
        #expect(ids(SyncPlan(server: server, installed: nil, selection: [F.unit]).new) == [F.usageID("math"), runtimeID])

        // A page installed earlier keeps its runtime up to date even outside a new selection.
        let installed = SyncClient.withRuntimeEntry(F.manifest([F.block("math", runtime: runtime.archive)], runtime: runtime))
        let plan = SyncPlan(server: server, installed: installed, selection: [F.otherUnit])
        #expect(ids(plan.unchanged) == [F.usageID("math"), runtimeID])
        #expect(ids(plan.new) == [F.usageID("plain")])
    }

    @Test func aNewRuntimeReplacesTheOldOne() {
        let old = F.runtime("0123456789abcdef")
        let new = F.runtime("fedcba9876543210")
        let installed = SyncClient.withRuntimeEntry(F.manifest([F.block("math", runtime: old.archive)], runtime: old))
        let server = SyncClient.withRuntimeEntry(F.manifest([F.block("math", version: 2, runtime: new.archive)], runtime: new))
        let plan = SyncPlan(server: server, installed: installed)
        #expect(ids(plan.outdated) == [F.usageID("math")])
        #expect(ids(plan.new) == [SyncClient.runtimeID(new)])
        #expect(ids(plan.removed) == [SyncClient.runtimeID(old)])
    }
}
