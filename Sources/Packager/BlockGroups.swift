import CourseExport
import Manifest

extension BlockEntry {
    /// The entry with the block's groups: who sees it (`group_access`) and its split test group.
    func withGroups(of block: Block) -> BlockEntry {
        var entry = self
        entry.groupAccess = block.groupAccess.isEmpty
            ? nil : Dictionary(uniqueKeysWithValues: block.groupAccess.map { (String($0.key), $0.value) })
        entry.splitTest = block.splitTestGroup.map {
            SplitTestGroupEntry(usageID: $0.splitTest, userPartitionID: $0.userPartitionID, groupID: $0.groupID)
        }
        return entry
    }
}

extension BlockOutcome {
    /// The outcome with the block's groups on its manifest entry.
    func withGroups(of block: Block) -> BlockOutcome {
        switch self {
        case .built(let entry, let stagedAt, let warnings): return .built(entry.withGroups(of: block), stagedAt: stagedAt, warnings: warnings)
        case .reused(let entry, let warnings): return .reused(entry.withGroups(of: block), warnings: warnings)
        case .onlineOnly(let entry): return .onlineOnly(entry.withGroups(of: block))
        case .failed: return self
        }
    }
}
