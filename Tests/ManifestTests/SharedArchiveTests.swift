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
