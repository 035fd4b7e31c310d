import Manifest
import Testing

@Suite struct SharedArchiveTests {
    static let search = SharedArchive(archive: "search/0123456789abcdef.zip", size: 10, sha256: "a", contentHash: "0123456789abcdef99")
    static let runtime = SharedArchive(archive: "runtime/fedcba9876543210.zip", size: 20, sha256: "b", contentHash: "fedcba987654321099")

    /// The manifest's field for each kind is the one its subscript reads and writes, so code that
    /// handles every kind alike reads the same manifest as code that names the field.
    @Test func eachKindIsTheManifestsFieldOfThatName() {
        var manifest = CourseManifest(courseID: "course-v1:O+N+R", publishedAt: "2026-11-22T10:00:00Z", generator: "test", blocks: [])
        #expect(manifest.sharedArchives.isEmpty)
        manifest[shared: .search] = Self.search
        manifest[shared: .runtime] = Self.runtime
        #expect(manifest.search == Self.search && manifest.runtime == Self.runtime)
        #expect(manifest.sharedArchives == [Self.runtime, Self.search])
        manifest[shared: .runtime] = nil
        #expect(manifest.runtime == nil && manifest.sharedArchives == [Self.search])
    }

    @Test func anArchiveIsNamedByItsKindAndTheStartOfItsContentHash() {
        #expect(SharedArchive.Kind.search.archivePath(contentHash: Self.search.contentHash) == Self.search.archive)
        #expect(SharedArchive.Kind.runtime.archivePath(contentHash: Self.runtime.contentHash) == Self.runtime.archive)
        #expect(ArchivePath.installFolder(of: Self.search.archive) == "search/0123456789abcdef")
    }
}

/// The one reader of staged names, and byte totals that cannot trap.
@Suite struct StagedNameTests {
    @Test func aStagedNameGivesItsArchiveAndNothingElseDoes() {
        let staged = ArchivePath.staged("html/intro.zip", contentHash: "0123456789abcdef0123")
        #expect(staged == "html/.intro.zip.staged-0123456789abcdef")
        #expect(ArchivePath.original(ofStaged: staged) == "html/intro.zip")
        #expect(ArchivePath.original(ofStaged: "html/.a.b.zip.staged-0123456789ABCDEF") == "html/a.b.zip")
        for refused in [
            "html/.staged-0123456789abcdef", "html/.zip.staged-0123456789abcdef", "html/..staged-0123456789abcdef",
            "html/.x.zip.staged-0123456789abcde", "html/.x.zip.staged-0123456789abcdeg", "html/x.zip.staged-0123456789abcdef",
            ".x.zip.staged-0123456789abcdef", "a/b/.x.zip.staged-0123456789abcdef", "html/.x.txt.staged-0123456789abcdef",
            "html/..x.zip.staged-0123456789abcdef", "", "/", ".", "html/.",
        ] {
            #expect(ArchivePath.original(ofStaged: refused) == nil, "\(refused)")
        }
    }

    @Test func anArchivePathIsTwoPlainComponentsEndingInZip() {
        #expect(ArchivePath.installFolder(of: "html/x.zip") == "html/x")
        #expect(ArchivePath.installFolder(of: "problem/a_b-c~d.e.zip") == "problem/a_b-c~d.e")
        for refused in [
            "html/.x.zip", "x.zip", "a/b/c.zip", "/x.zip", "html/.zip", ".zip", "html/x.ZIP", "html/é.zip", "html/x\u{301}.zip",
            "html/x.zip\u{301}", "html//x.zip", "html/x.zip/", "", "html/x", "html/x zip.zip", "../x.zip", "html/\u{0}.zip",
            "/\u{301}x.zip", "html/" + String(repeating: "n", count: ArchivePath.maximumComponentLength + 1) + ".zip",
        ] {
            #expect(ArchivePath.installFolder(of: refused) == nil, "\(refused)")
        }
    }

    @Test func byteTotalsSaturateInsteadOfTrapping() {
        #expect([UInt64.max, 1].totalBytes { $0 } == .max)
        #expect([UInt64.max - 1, 1, nil, 5].totalBytes { $0 } == .max)
        #expect([1, 2, nil].totalBytes { $0 } == 3)
        #expect([UInt64]().totalBytes { $0 } == 0)
    }
}

