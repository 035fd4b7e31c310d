import CourseExport
import Manifest

extension BlockEntry {
    /// The entry with what the course's walk says of the block: its type, name, place
    /// (`parents`) and groups (who sees it, `group_access`, and its split test group). An
    /// entry taken from the previous publish keeps only what its content decides: the walk's
    /// fields may have changed while the content did not (a block moved to another unit).
    func withPlace(of block: Block) -> BlockEntry {
        var entry = self
        entry.type = block.type
        entry.displayName = block.displayName
        entry.parents = block.parents
        entry.groupAccess = block.groupAccess.isEmpty
            ? nil : Dictionary(uniqueKeysWithValues: block.groupAccess.map { (String($0.key), $0.value) })
        entry.splitTest = block.splitTestGroup.map {
            SplitTestGroupEntry(usageID: $0.splitTest, userPartitionID: $0.userPartitionID, groupID: $0.groupID)
        }
        return entry
    }
}

extension BlockOutcome {
    /// The outcome with the walk's fields of the block on its manifest entry.
    func withPlace(of block: Block) -> BlockOutcome {
        switch self {
        case .built(let entry, let stagedAt, let warnings): return .built(entry.withPlace(of: block), stagedAt: stagedAt, warnings: warnings)
        case .reused(let entry, let warnings): return .reused(entry.withPlace(of: block), warnings: warnings)
        case .onlineOnly(let entry): return .onlineOnly(entry.withPlace(of: block))
        case .failed: return self
        }
    }
}
