import Manifest

/// The local manifest a sync writes: after each batch it swaps in (`final` false), and once at
/// the end. It must describe exactly what is installed at that moment, since a sync can be
/// stopped at any point (a full disk, a kill) and `status --verify`, reconciliation and the next
/// sync all trust it.
struct LocalManifestComposer: Sendable {
    let server: CourseManifest
    let installed: CourseManifest?
    /// Installed blocks the server no longer offers offline: their folders go only after the
    /// final manifest is written, so until then they keep their entries.
    let removedIDs: Set<String>

    /// `installedNow`: usage ids (of blocks, and of shared content: `SharedContent.usageID`) whose
    /// server version is installed.
    func manifest(installedNow: Set<String>, final: Bool) -> CourseManifest {
        let before = Dictionary((installed?.blocks ?? []).map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        var blocks: [BlockEntry] = []
        var listed = Set<String>()
        for block in server.blocks {
            let old = before[block.usageID]
            if !final, removedIDs.contains(block.usageID), let old, old.isOffline {
                blocks.append(old)
            } else if !block.isOffline || installedNow.contains(block.usageID) {
                blocks.append(block)
            } else if let old, old.isOffline, !removedIDs.contains(old.usageID) {
                // Only an installed block keeps its old entry; a stale online-only one would hide
                // that the server now offers the block offline.
                blocks.append(old)
            } else {
                continue
            }
            listed.insert(block.usageID)
        }
        if !final {
            blocks += (installed?.blocks ?? []).filter { $0.isOffline && removedIDs.contains($0.usageID) && !listed.contains($0.usageID) }
        }
        // Until the final manifest, the course's header stays the installed one's (unless the
        // sync replaces another course).
        var local = installed.flatMap { final || $0.courseID != server.courseID ? nil : $0 } ?? server
        local.blocks = blocks
        // Shared content is installed like blocks; one whose update failed (or is not done yet)
        // stays as installed.
        for kind in SharedContent.Kind.allCases {
            local[keyPath: kind.field] = sharedArchive(kind, installedNow: installedNow, final: final)
        }
        return local
    }

    private func sharedArchive(_ kind: SharedContent.Kind, installedNow: Set<String>, final: Bool) -> SharedArchive? {
        let offered = server[keyPath: kind.field]
        if let offered, installedNow.contains(SharedContent(kind, offered).usageID) { return offered }
        return !final || offered != nil ? installed?[keyPath: kind.field] : nil
    }
}
