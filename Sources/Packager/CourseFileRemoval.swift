import FileSystem
import Foundation
import Manifest

/// Published contents (`files/<hh>/<sha256>[.gz]`) that the manifest in place no longer names go
/// the way archives of removed blocks go: only after that manifest is in place, so a reader
/// holding the previous manifest finds them until then. Nothing the manifest names is touched,
/// and nothing outside `files/` is.
enum CourseFileRemoval {
    /// Returns how many contents were removed.
    @discardableResult
    static func removeUnnamed(in out: String, manifest: CourseManifest) -> Int {
        let root = out + "/" + CourseFile.folder
        let named = Set((manifest.files ?? [:]).map { $0.value.path(sha256: $0.key) })
        var removed = 0
        var emptied = Set<String>()
        // In a sorted order, so that what a failure leaves is the same every time.
        for shard in (DirectoryEntry.entries(of: root) ?? []).filter({ $0.kind == .folder }).map(\.name).sorted() {
            for entry in (DirectoryEntry.entries(of: root + "/" + shard) ?? []).sorted(by: { $0.name < $1.name }) where entry.kind != .folder {
                let relative = CourseFile.folder + "/" + shard + "/" + entry.name
                // unlink, not a recursive remove: a content is a file, never a folder.
                guard !named.contains(relative), unlink(out + "/" + relative) == 0 else { continue }
                removed += 1
                emptied.insert(root + "/" + shard)
            }
            if rmdir(root + "/" + shard) == 0 { emptied.insert(root) }
        }
        if rmdir(root) == 0 { emptied.insert(out) }
        // A removal lost in a power cut would leave a content no manifest names, forever.
        for folder in emptied.sorted() { try? DurableFile.syncFolder(folder) }
        return removed
    }
}
