import Foundation
import Manifest
import Testing
import TestSupport

@testable import SyncClient

/// Reading a server's manifest from a published folder: the size bound, the schema checks and the
/// safety checks all run before anything is planned, and each refusal names the manifest.
@Suite struct ServerManifestTests {
    func published(_ text: String) throws -> String {
        let folder = TestSupport.temporaryFolder("server")
        try TestSupport.write(["manifest.json": text], under: folder)
        return folder
    }

    func published(_ manifest: CourseManifest) throws -> String {
        try published(String(decoding: ManifestFile.encode(manifest), as: UTF8.self))
    }

    func error(_ body: () async throws(SyncError) -> Void) async -> SyncError? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func aPublishedFolderIsReadBackAsWritten() async throws {
        let manifest = Fixture.manifest([Fixture.block("a"), Fixture.onlineOnly("talk")], runtime: Fixture.runtime())
        let folder = try published(manifest)
        #expect(try await ManifestLoader.load(.folder(folder)) == manifest)
        #expect(try await ManifestLoader.load(SyncSource(folder + "/manifest.json")) == manifest)
    }

    @Test func aSourceIsAURLOrAFolderAndAManifestFileStandsForItsFolder() {
        #expect(SyncSource("https://cdn.example.org/courses/c1/manifest.json") == .http(URL(string: "https://cdn.example.org/courses/c1/")!))
        #expect(SyncSource("HTTP://cdn.example.org/c1/") == .http(URL(string: "HTTP://cdn.example.org/c1/")!))
        #expect(SyncSource("/srv/c1/manifest.json") == .folder("/srv/c1"))
        #expect(SyncSource("relative/c1") == .folder("relative/c1"))
        #expect(SyncSource.folder("/srv/c1").location(of: "html/a.zip") == "/srv/c1/html/a.zip")
        #expect(SyncSource("https://cdn.example.org/c1").location(of: "html/a.zip") == "https://cdn.example.org/c1/html/a.zip")
    }

    @Test func aFolderWithoutAManifestIsUnreachable() async {
        let folder = TestSupport.temporaryFolder("server")
        let failure = await error { () async throws(SyncError) in _ = try await ManifestLoader.load(.folder(folder)) }
        #expect(failure == .unreachable(source: folder + "/manifest.json", reason: "no manifest.json there"))
    }

    /// A FIFO (or any file that is not a regular one) where a folder source's manifest should be
    /// is refused at once, never waited on for a writer.
    @Test func aFIFOInAFolderSourceIsRefusedNotWaitedOn() async throws {
        let folder = TestSupport.temporaryFolder("server")
        #expect(mkfifo(folder + "/manifest.json", 0o644) == 0)
        let failure = await error { () async throws(SyncError) in _ = try await ManifestLoader.load(.folder(folder)) }
        #expect("\(String(describing: failure))".contains("not a regular file"), "\(String(describing: failure))")
    }

    /// The bound holds before the file is read: a sparse file of 65 MiB costs nothing to refuse.
    @Test func aManifestFileLargerThanTheLimitIsRefusedUnread() async throws {
        let folder = try published("{}")
        #expect(truncate(folder + "/manifest.json", off_t(ManifestLoader.sizeLimit + 1)) == 0)
        let failure = await error { () async throws(SyncError) in _ = try await ManifestLoader.load(.folder(folder)) }
        #expect(failure == .unsafeManifest(source: folder + "/manifest.json", reason: "manifest larger than 64 MiB"))
    }

    @Test func aManifestBodyLargerThanTheLimitIsRefused() {
        var body = Data(repeating: UInt8(ascii: " "), count: ManifestLoader.sizeLimit + 1)
        body.replaceSubrange(0..<2, with: Array("{}".utf8))
        #expect(throws: SyncError.unsafeManifest(source: "m", reason: "manifest larger than 64 MiB")) { try ManifestLoader.decode(body, shown: "m") }
        // Exactly at the limit it is parsed (and found not to be a manifest).
        body.removeLast()
        #expect(throws: SyncError.manifest(.invalid(path: "m", reason: "schema_version is missing"))) { try ManifestLoader.decode(body, shown: "m") }
    }

    @Test func aNewerSchemaIsRefusedNotGuessedAt() throws {
        let newer = #"{"schema_version": 99, "course_id": "x", "blocks": [], "future_field": true}"#
        #expect(throws: SyncError.manifest(.newerSchema(path: "m", version: 99))) { try ManifestLoader.decode(Data(newer.utf8), shown: "m") }
    }

    @Test(arguments: [
        ("", "not a JSON object with a schema_version"),
        ("[]", "not a JSON object with a schema_version"),
        (#"{"schema_version": "2"}"#, "not a JSON object with a schema_version"),
        (#"{"course_id": "x"}"#, "schema_version is missing"),
        (#"{"schema_version": 2, "course_id": "x", "published_at": "t", "generator": "g"}"#, "missing blocks at "),
        (#"{"schema_version": 2, "course_id": "x", "published_at": "t", "generator": "g", "blocks": [{"usage_id": "u", "type": "html", "parents": [], "size": "big"}]}"#,
         "wrong type at blocks.Index 0.size"),
    ])
    func aBodyThatIsNoManifestIsRefusedWithWhatIsWrong(body: String, reason: String) {
        #expect(throws: SyncError.manifest(.invalid(path: "m", reason: reason))) { try ManifestLoader.decode(Data(body.utf8), shown: "m") }
    }

    /// A sync validates what it fetched before planning: an unsafe manifest in the source stops it
    /// with nothing written to the target.
    @Test func aSyncRefusesAnUnsafeManifestBeforeTouchingTheTarget() async throws {
        let folder = try published(Fixture.manifest([Fixture.block("a", archive: "../outside.zip")]))
        let target = TestSupport.temporaryFolder("target") + "/device"
        let client = SyncClient(options: .init(source: .folder(folder), target: target))
        let failure = await error { () async throws(SyncError) in _ = try await client.sync() }
        #expect(failure == .unsafeManifest(
            source: folder + "/manifest.json", reason: "block \(Fixture.usageID("a")) has an unsafe archive path \"../outside.zip\""))
        let planFailure = await error { () async throws(SyncError) in _ = try await client.plan() }
        #expect(planFailure == failure)
        #expect(TestSupport.files(under: target).allSatisfy { $0.hasPrefix(".coursepack-sync/") }, "\(TestSupport.files(under: target))")
        #expect(!FileManager.default.fileExists(atPath: target + "/manifest.json"))
    }

    /// The plan a client shows before syncing, from a published folder and what is installed,
    /// with the runtime planned like a block.
    @Test func aClientPlansFromThePublishedFolderAndTheInstalledManifest() async throws {
        let runtime = Fixture.runtime()
        let folder = try published(Fixture.manifest([Fixture.block("a", version: 2), Fixture.block("b", runtime: runtime.archive)], runtime: runtime))
        let target = TestSupport.temporaryFolder("target")
        try ManifestFile.write(Fixture.manifest([Fixture.block("a"), Fixture.block("old")]), to: target + "/manifest.json")
        for installedFolder in ["html/a", "html/old"] {
            try FileManager.default.createDirectory(atPath: target + "/" + installedFolder, withIntermediateDirectories: true)
        }
        let (plan, notModified) = try await SyncClient(options: .init(source: .folder(folder), target: target)).plan()
        #expect(!notModified)
        #expect(plan.outdated.map(\.usageID) == [Fixture.usageID("a")])
        #expect(plan.new.map(\.usageID) == [Fixture.usageID("b"), SharedContent(.runtime, runtime).usageID])
        #expect(plan.removed.map(\.usageID) == [Fixture.usageID("old")])
    }
}
