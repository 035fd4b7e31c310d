import ClientTarget
import Foundation
import Manifest
import SyncClient
import Testing
import TestSupport

/// The device-sync workflow as an app embedding the library runs it: one call to preview, one
/// to sync, no step of the command line's copied.
@Suite(.serialized) struct TargetSyncLibraryTests {
    @Test func aPreviewChangesNothingAndPlansWhatTheSyncThenInstalls() async throws {
        let folder = TestSupport.temporaryFolder("target-sync")
        let published = folder + "/published"
        let built = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        #expect(built.status == 0, "\(built.stderr)")
        let target = ClientTarget(root: folder + "/device")
        let request = ClientTarget.SyncRequest(source: SyncSource(published))

        let preview = try await target.preview(request)
        #expect(!FileManager.default.fileExists(atPath: target.root), "a preview wrote into the target")
        #expect(preview.replaced.isEmpty)
        let server = try #require(try ManifestFile.read(published + "/manifest.json"))
        // Every offline block, and the runtime and the search index once each.
        let shared = [server.runtime, server.search].compactMap { $0 }.count
        #expect(preview.plan.new.count == server.blocks.filter(\.isOffline).count + shared)
        #expect(preview.plan.new.filter { $0.usageID.hasPrefix("runtime:") || $0.usageID.hasPrefix("search:") }.count == shared)

        let report = try await target.sync(request)
        let summary = try #require(report.summary)
        #expect(summary.failures.isEmpty)
        #expect(summary.downloadedBlocks == preview.plan.new.count)
        #expect(summary.plan.downloads.map(\.usageID) == preview.plan.downloads.map(\.usageID))

        let again = try await target.preview(request)
        #expect(again.plan.downloads.isEmpty && again.plan.unchanged.count == preview.plan.new.count)
    }
}
