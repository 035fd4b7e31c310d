import Manifest

/// What a sync will do: compare the installed blocks with the server's manifest.
public struct SyncPlan: Sendable {
    public var new: [BlockEntry] = []
    public var outdated: [BlockEntry] = []
    /// Installed blocks the server no longer offers offline.
    public var removed: [BlockEntry] = []
    public var unchanged: [BlockEntry] = []

    public var downloads: [BlockEntry] { new + outdated }
    public var bytesToDownload: UInt64 { downloads.totalBytes(\.size) }
    public var bytesToDelete: UInt64 { removed.totalBytes(\.size) }

    /// `selection`: usage ids of blocks or of containers (chapter, sequential, vertical) whose
    /// blocks to sync; empty means all. Blocks outside it are left as they are.
    /// `emptySelectionMeansAll: false` makes an empty selection choose nothing new.
    public init(
        server: CourseManifest, installed: CourseManifest?, selection: Set<String> = [], emptySelectionMeansAll: Bool = true,
        isPresent: (BlockEntry) -> Bool = { _ in true }
    ) {
        // The local manifest also lists the server's online-only blocks; they are not installed,
        // and counting them would download a block that turns offline-capable outside the selection.
        let local = Dictionary((installed?.blocks ?? []).filter(\.isOffline).map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        let offered = Dictionary(server.blocks.filter(\.isOffline).map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        func chosen(_ block: BlockEntry) -> Bool {
            (selection.isEmpty && emptySelectionMeansAll) || selection.contains(block.usageID) || block.parents.contains { selection.contains($0) }
        }
        // The shared runtime archive goes with the selected or installed pages that load it.
        let runtimesInUse = Set(server.blocks.filter { chosen($0) || local[$0.usageID] != nil }.compactMap(\.runtime))
        for block in server.blocks where block.isOffline {
            let selected: Bool
            switch SharedContent.kind(ofPlanned: block) {
            case .runtime?: selected = runtimesInUse.contains(block.archive ?? "")
            // The search index goes with every course: the outline page and `search` read it.
            case .search?: selected = true
            case nil: selected = chosen(block)
            }
            let before = local[block.usageID]
            guard selected || before != nil else { continue }
            // A folder installed before the server listed contents moves to the store: its files
            // are taken into it, not downloaded again (`fillStore`).
            let upgrades = block.files != nil && before?.files == nil
            if let before, block.isSameDownload(as: before), !upgrades, isPresent(before) {
                unchanged.append(block)
            } else if before != nil {
                outdated.append(block)
            } else {
                new.append(block)
            }
        }
        removed = (installed?.blocks ?? []).filter { $0.isOffline && offered[$0.usageID] == nil }
    }
}
