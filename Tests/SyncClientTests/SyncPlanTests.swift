import Manifest
import Testing

@testable import SyncClient

/// What a sync decides from the installed manifest and the server's, before any download.
@Suite struct SyncPlanTests {
    func ids(_ blocks: [BlockEntry]) -> [String] { blocks.map(\.usageID) }

    @Test func eachBlockIsNewOutdatedRemovedOrUnchanged() {
        let installed = Fixture.manifest([
            Fixture.block("same"), Fixture.block("edited"), Fixture.block("moved"), Fixture.block("gone"), Fixture.block("nowOnline", type: "video"),
        ])
        let server = Fixture.manifest([
            Fixture.block("same"), Fixture.block("edited", version: 2), Fixture.block("moved", archive: "html/moved2.zip"),
            Fixture.onlineOnly("nowOnline", type: "video"), Fixture.block("fresh", size: 40), Fixture.onlineOnly("talk"),
        ])
        let plan = SyncPlan(server: server, installed: installed)
        #expect(ids(plan.unchanged) == [Fixture.usageID("same")])
        #expect(ids(plan.outdated) == [Fixture.usageID("edited"), Fixture.usageID("moved")])
        #expect(ids(plan.new) == [Fixture.usageID("fresh")])
        // A block the server now lists as online-only goes, as does one it no longer lists.
        #expect(ids(plan.removed) == [Fixture.usageID("gone"), Fixture.usageID("nowOnline", type: "video")])
        #expect(ids(plan.downloads) == [Fixture.usageID("fresh"), Fixture.usageID("edited"), Fixture.usageID("moved")])
        // Outdated blocks carry the server's entry, the one to download.
        #expect(plan.outdated.first?.sha256 == Fixture.digest(2))
        #expect(plan.bytesToDownload == 40 + 100 + 100)
        #expect(plan.bytesToDelete == 200)
    }

    @Test func withNothingInstalledEveryOfflineBlockIsNew() {
        let server = Fixture.manifest([Fixture.block("a"), Fixture.onlineOnly("talk"), Fixture.block("b", type: "problem")])
        let plan = SyncPlan(server: server, installed: nil)
        #expect(ids(plan.new) == [Fixture.usageID("a"), Fixture.usageID("b", type: "problem")])
        #expect(plan.outdated.isEmpty && plan.removed.isEmpty && plan.unchanged.isEmpty)
    }

    @Test func anInstalledBlockWhoseFolderIsMissingIsDownloadedAgain() {
        let both = Fixture.manifest([Fixture.block("kept"), Fixture.block("damaged")])
        let plan = SyncPlan(server: both, installed: both) { $0.usageID != Fixture.usageID("damaged") }
        #expect(ids(plan.unchanged) == [Fixture.usageID("kept")])
        #expect(ids(plan.outdated) == [Fixture.usageID("damaged")])
    }

    @Test func aSelectionChoosesBlocksByIdOrByAnyEnclosingContainer() {
        let server = Fixture.manifest([
            Fixture.block("a"), Fixture.block("b", parents: [Fixture.otherUnit]), Fixture.block("c", parents: [Fixture.otherUnit]), Fixture.block("d"),
        ])
        let byContainer = SyncPlan(server: server, installed: nil, selection: [Fixture.otherUnit])
        #expect(ids(byContainer.new) == [Fixture.usageID("b"), Fixture.usageID("c")])
        let byBlock = SyncPlan(server: server, installed: nil, selection: [Fixture.usageID("d")])
        #expect(ids(byBlock.new) == [Fixture.usageID("d")])
    }

    @Test func installedBlocksOutsideTheSelectionAreStillUpdatedAndNeverRemovedForIt() {
        let installed = Fixture.manifest([Fixture.block("a"), Fixture.block("b")])
        let server = Fixture.manifest([Fixture.block("a", version: 2), Fixture.block("b"), Fixture.block("c")])
        let plan = SyncPlan(server: server, installed: installed, selection: [Fixture.usageID("c")])
        #expect(ids(plan.outdated) == [Fixture.usageID("a")])
        #expect(ids(plan.unchanged) == [Fixture.usageID("b")])
        #expect(ids(plan.new) == [Fixture.usageID("c")])
        #expect(plan.removed.isEmpty)
    }

    @Test func anEmptySelectionThatMeansNoneUpdatesWhatIsInstalledAndAddsNothing() {
        let installed = Fixture.manifest([Fixture.block("a")])
        let server = Fixture.manifest([Fixture.block("a", version: 2), Fixture.block("b")])
        let plan = SyncPlan(server: server, installed: installed, emptySelectionMeansAll: false)
        #expect(ids(plan.outdated) == [Fixture.usageID("a")])
        #expect(plan.new.isEmpty)
    }

    /// The local manifest keeps the server's online-only entries (so a client can offer "open
    /// online"); such an entry is not an installed block, and must not make its block count as
    /// installed once the server offers it offline: a target's selection (its budget) decides.
    @Test func aBlockThatBecomesAvailableOfflineIsNewAndFollowsTheSelection() {
        let installed = Fixture.manifest([Fixture.block("a"), Fixture.onlineOnly("clip", type: "video")])
        let server = Fixture.manifest([Fixture.block("a"), Fixture.block("clip", type: "video")])
        let chosen = SyncPlan(server: server, installed: installed)
        #expect(ids(chosen.new) == [Fixture.usageID("clip", type: "video")])
        #expect(chosen.outdated.isEmpty)
        let notChosen = SyncPlan(server: server, installed: installed, selection: [Fixture.usageID("a")])
        #expect(notChosen.downloads.isEmpty, "a block outside the selection was planned: \(ids(notChosen.downloads))")
        let noRoom = SyncPlan(server: server, installed: installed, emptySelectionMeansAll: false)
        #expect(noRoom.downloads.isEmpty, "a target with no room got a new block: \(ids(noRoom.downloads))")
    }

    @Test func theRuntimeComesWithTheSelectedOrInstalledPagesThatLoadItAndOnlyThen() {
        let runtime = Fixture.runtime()
        let server = SharedContent.asBlocks(Fixture.manifest([
            Fixture.block("math", runtime: runtime.archive), Fixture.block("plain", parents: [Fixture.otherUnit]),
        ], runtime: runtime))
        #expect(server.blocks.last?.type == "runtime" && server.blocks.last?.archive == runtime.archive)
        let runtimeID = SharedContent(.runtime, runtime).usageID

        #expect(ids(SyncPlan(server: server, installed: nil).new) == [Fixture.usageID("math"), Fixture.usageID("plain"), runtimeID])
        #expect(ids(SyncPlan(server: server, installed: nil, selection: [Fixture.otherUnit]).new) == [Fixture.usageID("plain")])
        #expect(ids(SyncPlan(server: server, installed: nil, selection: [Fixture.unit]).new) == [Fixture.usageID("math"), runtimeID])

        // A page installed earlier keeps its runtime up to date even outside a new selection.
        let installed = SharedContent.asBlocks(Fixture.manifest([Fixture.block("math", runtime: runtime.archive)], runtime: runtime))
        let plan = SyncPlan(server: server, installed: installed, selection: [Fixture.otherUnit])
        #expect(ids(plan.unchanged) == [Fixture.usageID("math"), runtimeID])
        #expect(ids(plan.new) == [Fixture.usageID("plain")])
    }

    @Test func aNewRuntimeReplacesTheOldOne() {
        let old = Fixture.runtime("0123456789abcdef")
        let new = Fixture.runtime("fedcba9876543210")
        let installed = SharedContent.asBlocks(Fixture.manifest([Fixture.block("math", runtime: old.archive)], runtime: old))
        let server = SharedContent.asBlocks(Fixture.manifest([Fixture.block("math", version: 2, runtime: new.archive)], runtime: new))
        let plan = SyncPlan(server: server, installed: installed)
        #expect(ids(plan.outdated) == [Fixture.usageID("math")])
        #expect(ids(plan.new) == [SharedContent(.runtime, new).usageID])
        #expect(ids(plan.removed) == [SharedContent(.runtime, old).usageID])
    }
}
