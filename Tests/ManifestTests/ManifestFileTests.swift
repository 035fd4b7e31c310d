import Foundation
import Manifest
import Testing
import TestSupport

@Suite struct ManifestFileTests {
    /// A write that fails says so, and names the file: not "cannot be read".
    @Test func aFailedWriteIsUnwritableAndKeepsTheOldManifest() throws {
        let folder = TestSupport.temporaryFolder("manifest")
        let manifest = CourseManifest(courseID: "course-v1:O+N+R", publishedAt: "2026-11-22T10:00:00Z", generator: "coursepack test", blocks: [])
        // A name the file system takes but not with a temporary file's prefix and suffix around
        // it (255 bytes at most): every write fails, whatever is planted (a folder at the
        // temporary name no longer fails one; `DurableFile.replace` then uses a name of its own).
        // 250 bytes: with the dot before and ".tmp-" and the pid after, 257 or more whatever
        // the pid (at 245 a pid under 10,000 fitted, and the write succeeded).
        let path = folder + "/" + String(repeating: "m", count: 245) + ".json"
        try ManifestFile.encode(manifest).write(to: URL(fileURLWithPath: path))
        let before = TestSupport.read(path)
        var changed = manifest
        changed.publishedAt = "2026-12-01T00:00:00Z"
        #expect {
            try ManifestFile.write(changed, to: path)
        } throws: { error in
            guard case .unwritable(let written, _) = error as? ManifestError else { return false }
            return written == path
        }
        #expect(TestSupport.read(path) == before)
    }

    /// The shared comparison behind `diff` and `sync`: another archive path is another download.
    @Test func anArchiveMovedToAnotherPathIsAChange() throws {
        let block = BlockEntry(usageID: "u", type: "html", displayName: "x", parents: [], archive: "html/a.zip", size: 1, sha256: "s", contentHash: "c", lastModified: "2026-11-22T10:00:00Z")
        var moved = block
        moved.archive = "html/b.zip"
        let old = CourseManifest(courseID: "c", publishedAt: "2026-11-22T10:00:00Z", generator: "g", blocks: [block])
        let new = CourseManifest(courseID: "c", publishedAt: "2026-11-22T10:00:00Z", generator: "g", blocks: [moved])
        #expect(ManifestDiff(old: old, new: new).changed.map(\.usageID) == ["u"])
        #expect(ManifestDiff(old: old, new: old).changed.isEmpty)
    }
}
