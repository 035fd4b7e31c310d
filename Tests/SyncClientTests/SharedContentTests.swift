import Manifest
import Testing

@testable import SyncClient

/// Content a course keeps once (the page runtime, the search index) is one concept keyed by
/// kind: planned as blocks, kept as installed when its update fails, validated alike.
@Suite struct SharedContentTests {
    static func search(_ name: String = "fedcba9876543210") -> SharedArchive {
        SharedArchive(archive: "search/\(name).zip", size: 300, sha256: Fixture.digest(9), contentHash: Fixture.digest(10))
    }

    static func manifest(runtime: SharedArchive?, search: SharedArchive?) -> CourseManifest {
        var manifest = Fixture.manifest([Fixture.block("math", runtime: runtime?.archive)], runtime: runtime)
        manifest.search = search
        return manifest
    }

    @Test func eachKindIsListedOncePlannedAsABlockAndIdentifiedByItsArchive() {
        let manifest = Self.manifest(runtime: Fixture.runtime(), search: Self.search())
        let shared = SharedContent.all(in: manifest)
        #expect(shared.map(\.kind) == [.runtime, .search])
        #expect(shared.map(\.usageID) == ["runtime:runtime/0123456789abcdef.zip", "search:search/fedcba9876543210.zip"])
        #expect(shared.map(\.installFolder) == ["runtime/0123456789abcdef", "search/fedcba9876543210"])
        let planned = SharedContent.asBlocks(manifest).blocks.dropFirst()
        #expect(planned.map(\.usageID) == shared.map(\.usageID))
        #expect(planned.map { SharedContent.kind(ofPlanned: $0) } == [.runtime, .search])
        #expect(SharedContent.kind(ofPlanned: Fixture.block("runtime", type: "runtime")) == nil, "a course block of type runtime is not shared content")
    }

    /// A batch in the middle of a sync, and the final manifest: shared content whose new version
    /// is not installed stays as installed, of every kind alike; the final manifest drops what
    /// the server no longer lists.
    @Test(arguments: [SharedContent.Kind.runtime, .search])
    func sharedContentWhoseUpdateFailedStaysAsInstalled(kind: SharedContent.Kind) {
        let old = kind == .runtime ? Fixture.runtime("0000000000000001") : Self.search("0000000000000001")
        let new = kind == .runtime ? Fixture.runtime("0000000000000002") : Self.search("0000000000000002")
        var installed = Self.manifest(runtime: nil, search: nil)
        installed[keyPath: kind.field] = old
        var server = installed
        server[keyPath: kind.field] = new
        let composer = LocalManifestComposer(server: server, installed: installed, removedIDs: [])
        let mathID = Fixture.usageID("math")
        #expect(composer.manifest(installedNow: [mathID], final: true)[keyPath: kind.field] == old)
        #expect(composer.manifest(installedNow: [mathID, SharedContent(kind, new).usageID], final: true)[keyPath: kind.field] == new)
        var dropped = server
        dropped[keyPath: kind.field] = nil
        let dropping = LocalManifestComposer(server: dropped, installed: installed, removedIDs: [])
        #expect(dropping.manifest(installedNow: [mathID], final: false)[keyPath: kind.field] == old, "until the end, what is installed stays named")
        #expect(dropping.manifest(installedNow: [mathID], final: true)[keyPath: kind.field] == nil)
    }
}
