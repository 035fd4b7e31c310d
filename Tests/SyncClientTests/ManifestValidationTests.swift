import Manifest
import Testing

@testable import SyncClient

/// A server's manifest is untrusted: every rule that refuses one, each shown by the smallest
/// manifest that breaks it, and the reason the refusal gives.
@Suite struct ManifestValidationTests {
    /// The refusal's reason, or nil when the manifest is accepted.
    func refusal(_ manifest: CourseManifest) -> String? {
        do {
            try ManifestValidation.check(manifest, source: "https://cdn.example.org/c/manifest.json")
            return nil
        } catch {
            guard case .unsafeManifest(let source, let reason) = error else { return "unexpected error \(error)" }
            #expect(source == "https://cdn.example.org/c/manifest.json", "the refusal names the manifest")
            return reason
        }
    }

    @Test func aPlainManifestIsAccepted() {
        let manifest = Fixture.manifest([
            Fixture.block("a"), Fixture.block("b", type: "problem"), Fixture.onlineOnly("talk"), Fixture.block("x_y-z~1.2", type: "video"),
            Fixture.block("math", runtime: Fixture.runtime().archive),
        ], runtime: Fixture.runtime())
        #expect(refusal(manifest) == nil)
    }

    @Test func anInstallFolderIsTheArchivePathWithoutZip() {
        #expect(ArchivePath.installFolder(of: "html/a.zip") == "html/a")
        #expect(ArchivePath.installFolder(of: "runtime/0123456789abcdef.zip") == "runtime/0123456789abcdef")
    }

    /// Only `<type>/<name>.zip` of plain ASCII parts: nothing escapes the target, nothing lands
    /// in the client's dot-folders, no block folder is a type folder or inside another block's.
    @Test(arguments: [
        "html.zip", "html/a/b.zip", "html/a", "html/a.ZIP", "html/a.tar", "../a.zip", "html/../a.zip", "/html/a.zip",
        "html//a.zip", "html/.zip", ".coursepack-sync/a.zip", "html/.hidden.zip", "./a.zip", "html/a b.zip",
        "html/a%2F.zip", "html\\a.zip", "html/é.zip", "html/a:b.zip", "", ".zip", "html/a.zip/", "html/a\u{0}.zip",
        "html/a\u{301}.zip", "html/a\r\n.zip", "html/\u{FF41}.zip",
    ])
    func unsafeArchivePathsAreRefused(archive: String) {
        #expect(ArchivePath.installFolder(of: archive) == nil)
        let reason = refusal(Fixture.manifest([Fixture.block("a"), Fixture.block("bad", archive: archive)]))
        #expect(reason == "block \(Fixture.usageID("bad")) has an unsafe archive path \"\(archive)\"")
    }

    /// A client appends a staging suffix to a folder name, which must still fit in 255 bytes.
    @Test func anOverlongNameIsRefused() {
        let longest = String(repeating: "n", count: ArchivePath.maximumComponentLength)
        #expect(refusal(Fixture.manifest([Fixture.block(longest)])) == nil)
        let reason = refusal(Fixture.manifest([Fixture.block(longest + "n")]))
        #expect(reason == "block \(Fixture.usageID(longest + "n")) has an unsafe archive path \"html/\(longest)n.zip\"")
        #expect(ArchivePath.installFolder(of: longest + "t/a.zip") == nil, "the type folder too")
    }

    @Test func aBlockListedTwiceIsRefused() {
        let reason = refusal(Fixture.manifest([Fixture.block("a"), Fixture.block("b"), Fixture.block("a", archive: "html/a2.zip")]))
        #expect(reason == "block \(Fixture.usageID("a")) is listed twice")
    }

    @Test func anOnlineOnlyBlockListedTwiceIsRefusedToo() {
        let reason = refusal(Fixture.manifest([Fixture.onlineOnly("talk"), Fixture.onlineOnly("talk")]))
        #expect(reason == "block \(Fixture.usageID("talk", type: "discussion")) is listed twice")
    }

    @Test(arguments: ["html/a.zip", "html/A.zip", "HTML/a.zip"])
    func twoBlocksUnpackingIntoOneFolderAreRefused(second: String) {
        let reason = refusal(Fixture.manifest([Fixture.block("a"), Fixture.block("b", archive: second)]))
        #expect(reason == "two blocks unpack into \"\(String(second.dropLast(4)))\" (names may differ only by case)")
    }

    @Test func aBlockUnpackingIntoTheRuntimeFolderIsRefused() {
        let runtime = Fixture.runtime()
        let reason = refusal(Fixture.manifest([Fixture.block("a", archive: runtime.archive)], runtime: runtime))
        #expect(reason == "two blocks unpack into \"runtime/0123456789abcdef\" (names may differ only by case)")
    }

    @Test(arguments: ["runtime.zip", "html/0123456789abcdef.zip", "runtime/a/b.zip", "runtime/../x.zip", "runtime/.x.zip"])
    func aRuntimeOutsideTheRuntimeFolderIsRefused(archive: String) {
        var runtime = Fixture.runtime()
        runtime.archive = archive
        #expect(refusal(Fixture.manifest([Fixture.block("a")], runtime: runtime)) == "the runtime archive has an unsafe path \"\(archive)\"")
    }

    @Test func aRuntimeWithoutAPlausibleSizeOrDigestIsRefused() {
        for broken in [
            RuntimeArchive(archive: "runtime/r.zip", size: ManifestValidation.maximumArchiveSize + 1, sha256: Fixture.digest(1), contentHash: Fixture.digest(2)),
            RuntimeArchive(archive: "runtime/r.zip", size: 10, sha256: String(Fixture.digest(1).dropLast()), contentHash: Fixture.digest(2)),
            RuntimeArchive(archive: "runtime/r.zip", size: 10, sha256: String(repeating: "AB", count: 32), contentHash: Fixture.digest(2)),
        ] {
            #expect(refusal(Fixture.manifest([], runtime: broken)) == "the runtime archive has no plausible size or sha256")
        }
    }

    @Test func sizesMustBeGivenAndBelowTheLimit() {
        var missing = Fixture.block("a")
        missing.size = nil
        #expect(refusal(Fixture.manifest([missing])) == "block \(Fixture.usageID("a")) has no plausible archive size (none)")
        let huge = Fixture.block("a", size: ManifestValidation.maximumArchiveSize + 1)
        #expect(refusal(Fixture.manifest([huge])) == "block \(Fixture.usageID("a")) has no plausible archive size (\(ManifestValidation.maximumArchiveSize + 1))")
        #expect(refusal(Fixture.manifest([Fixture.block("a", size: ManifestValidation.maximumArchiveSize)])) == nil)
        #expect(refusal(Fixture.manifest([Fixture.block("a", size: 0)])) == nil)
    }

    @Test(arguments: ["", "abc", String(repeating: "0", count: 63), String(repeating: "0", count: 65), String(repeating: "A", count: 64),
        String(repeating: "g", count: 64), String(repeating: "0", count: 62) + "/."])
    func aBlockWithoutAValidSha256IsRefused(sha: String) {
        var block = Fixture.block("a")
        block.sha256 = sha
        #expect(refusal(Fixture.manifest([block])) == "block \(Fixture.usageID("a")) has no valid sha256")
    }

    @Test func aBlockWithNoSha256IsRefused() {
        var block = Fixture.block("a")
        block.sha256 = nil
        #expect(refusal(Fixture.manifest([block])) == "block \(Fixture.usageID("a")) has no valid sha256")
    }

    /// An online-only entry is never downloaded, installed or deleted, so its other fields do not matter.
    @Test func onlineOnlyBlocksAreNotCheckedForArchives() {
        var listed = Fixture.onlineOnly("talk")
        listed.archive = "../../etc/passwd"
        #expect(refusal(Fixture.manifest([Fixture.block("a"), listed])) == nil)
    }
}
