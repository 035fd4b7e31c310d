import Manifest
import SyncClient

/// A server's manifest, seen as ids: which exist, which are offline blocks, what is under what.
struct CourseView: Sendable {
    let manifest: CourseManifest
    let offlineIDs: [String]
    let known: Set<String>
    let sizes: [String: UInt64]
    let parents: [String: [String]]
    let entries: [String: BlockEntry]

    init(_ manifest: CourseManifest) {
        self.manifest = manifest
        offlineIDs = manifest.blocks.filter(\.isOffline).map(\.usageID)
        var known = Set(manifest.blocks.map(\.usageID)).union(manifest.blocks.flatMap(\.parents)).union((manifest.outline ?? []).map(\.usageID))
        known.insert(manifest.courseID)
        self.known = known
        sizes = Dictionary(manifest.blocks.map { ($0.usageID, $0.size ?? 0) }, uniquingKeysWith: { a, _ in a })
        parents = Dictionary(manifest.blocks.map { ($0.usageID, $0.parents) }, uniquingKeysWith: { a, _ in a })
        entries = Dictionary(manifest.blocks.map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
    }

    func knows(_ id: String) -> Bool { known.contains(id) }
    func archiveBytes(of id: String) -> UInt64 { sizes[id] ?? 0 }

    /// What the offered block would take once installed (see `FolderCost`).
    func cost(of id: String) -> FolderCost {
        guard let block = entries[id] else { return FolderCost() }
        return FolderCost(offered: block, files: manifest.files)
    }

    /// What the offered shared folders would take.
    var sharedCosts: [(SharedContent, FolderCost)] {
        SharedContent.all(in: manifest).map { ($0, FolderCost(offered: $0.blockEntry(publishedAt: manifest.publishedAt), files: manifest.files)) }
    }

    func isPinned(_ id: String, pins: [String]) -> Bool {
        pins.contains(manifest.courseID) || pins.contains(id) || (parents[id] ?? []).contains { pins.contains($0) }
    }

    /// The offline blocks asked for: the selection's, then the prefetch's, in course order.
    func requested(selection: [String], next: Int?, after: String?) -> [String] {
        var ids: [String] = []
        let selected = Set(selection)
        if !selected.isEmpty {
            ids = offlineIDs.filter { selected.contains($0) || (parents[$0] ?? []).contains { selected.contains($0) } || selected.contains(manifest.courseID) }
        }
        if let next, let after {
            // Online-only blocks cannot be installed: the next N are the next N offline ones.
            let blocks = manifest.blocks
            let start = blocks.firstIndex { $0.usageID == after }.map { $0 + 1 }
                ?? blocks.firstIndex { $0.parents.contains(after) || after == manifest.courseID } ?? blocks.count
            for block in blocks[start...].filter(\.isOffline).prefix(max(0, next)) where !ids.contains(block.usageID) {
                ids.append(block.usageID)
            }
        }
        return ids
    }
}
