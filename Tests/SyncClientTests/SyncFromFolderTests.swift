import Foundation
import Manifest
import Testing
import TestSupport
import ZipArchive

@testable import SyncClient

/// Real syncs from a published folder (the same code path as over HTTP but for the transfer):
/// real archives, real installs, the local manifest the next sync plans from.
@Suite struct SyncFromFolderTests {
    /// Writes `<type>/<name>.zip` holding an index.html into `folder` and returns its manifest entry.
    func publish(_ name: String, type: String = "html", page: String, into folder: String, parents: [String] = [Fixture.unit]) throws -> BlockEntry {
        let archive = "\(type)/\(name).zip"
        try FileManager.default.createDirectory(atPath: folder + "/" + type, withIntermediateDirectories: true)
        let size = try ZipWriter().write([ZipEntry(name: "index.html", source: .bytes(Array(page.utf8)))], to: folder + "/" + archive)
        // The archives are deterministic, so their digest stands in for the content hash too.
        let sha256 = try SyncClient.sha256(of: folder + "/" + archive)
        return BlockEntry(
            usageID: Fixture.usageID(name, type: type), type: type, displayName: name, parents: parents, archive: archive, size: size,
            sha256: sha256, contentHash: sha256, lastModified: "2026-11-22T10:00:00Z")
    }

    /// A block listed online-only in one publish and offline in the next is a new block for the
    /// target: a selection that leaves it out leaves it out, and the local manifest does not keep
    /// calling it online-only.
    @Test func aBlockThatBecomesAvailableOfflineOutsideTheSelectionIsNeitherFetchedNorMisreported() async throws {
        let published = TestSupport.temporaryFolder("published")
        let target = TestSupport.temporaryFolder("device")
        let a = try publish("a", page: "<p>A</p>", into: published)
        try ManifestFile.write(Fixture.manifest([a, Fixture.onlineOnly("clip", type: "video")]), to: published + "/manifest.json")
        let selected = SyncClient(options: .init(source: .folder(published), target: target, selection: [a.usageID]))
        let first = try await selected.sync()
        #expect(first.downloadedBlocks == 1 && first.failures.isEmpty)
        #expect(String(decoding: TestSupport.read(target + "/html/a/index.html"), as: UTF8.self) == "<p>A</p>")
        let afterFirst = try #require(try ManifestFile.read(target + "/manifest.json"))
        #expect(afterFirst.blocks.map(\.usageID) == [a.usageID, Fixture.usageID("clip", type: "video")], "online-only blocks are listed for the app")

        let clip = try publish("clip", type: "video", page: "<video></video>", into: published)
        try ManifestFile.write(Fixture.manifest([a, clip]), to: published + "/manifest.json")
        let second = try await selected.sync()
        #expect(second.plan.downloads.isEmpty && second.downloadedBlocks == 0)
        #expect(!FileManager.default.fileExists(atPath: target + "/video/clip"))
        let afterSecond = try #require(try ManifestFile.read(target + "/manifest.json"))
        #expect(afterSecond.blocks.map(\.usageID) == [a.usageID], "the stale online-only entry is gone: \(afterSecond.blocks)")

        let everything = try await SyncClient(options: .init(source: .folder(published), target: target)).sync()
        #expect(everything.plan.new.map(\.usageID) == [clip.usageID] && everything.downloadedBlocks == 1)
        #expect(String(decoding: TestSupport.read(target + "/video/clip/index.html"), as: UTF8.self) == "<video></video>")
    }

    /// An archive whose bytes are not the ones the manifest names is not installed, and the
    /// block installed before stays.
    @Test func anArchiveThatDoesNotMatchItsManifestIsNotInstalled() async throws {
        let published = TestSupport.temporaryFolder("published")
        let target = TestSupport.temporaryFolder("device")
        let a = try publish("a", page: "<p>one</p>", into: published)
        try ManifestFile.write(Fixture.manifest([a]), to: published + "/manifest.json")
        let client = SyncClient(options: .init(source: .folder(published), target: target))
        #expect(try await client.sync().downloadedBlocks == 1)

        var changed = try publish("a", page: "<p>two</p>", into: published)
        changed.sha256 = Fixture.digest(99)
        try ManifestFile.write(Fixture.manifest([changed]), to: published + "/manifest.json")
        let summary = try await client.sync()
        #expect(summary.failures.map(\.usageID) == [a.usageID])
        #expect(summary.failures.first?.error == .verification(
            archive: "html/a.zip", reason: "sha256 does not match the manifest; the installed version is kept"))
        #expect(String(decoding: TestSupport.read(target + "/html/a/index.html"), as: UTF8.self) == "<p>one</p>")
        #expect(try ManifestFile.read(target + "/manifest.json")?.blocks == [a], "the local manifest keeps the installed entry")
    }
}
