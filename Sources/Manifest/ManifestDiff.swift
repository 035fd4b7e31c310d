/// How a client's copy of a course differs from the server's: what to download, what to delete.
public struct ManifestDiff: Sendable, Equatable {
    public var added: [BlockEntry] = []
    public var changed: [BlockEntry] = []
    public var removed: [BlockEntry] = []
    public var unchanged: [BlockEntry] = []

    /// Blocks are matched by usage id; a block is outdated when `isSameDownload` says so.
    /// Blocks that are not available offline are never downloaded.
    public init(old: CourseManifest?, new: CourseManifest) {
        let previous = Dictionary((old?.blocks ?? []).map { ($0.usageID, $0) }, uniquingKeysWith: { first, _ in first })
        let current = Set(new.blocks.map(\.usageID))
        for block in new.blocks {
            guard let before = previous[block.usageID], before.isOffline else {
                if block.isOffline { added.append(block) } else { unchanged.append(block) }
                continue
            }
            if !block.isOffline {
                removed.append(before)
            } else if !block.isSameDownload(as: before) {
                changed.append(block)
            } else {
                unchanged.append(block)
            }
        }
        removed += (old?.blocks ?? []).filter { !current.contains($0.usageID) && $0.isOffline }
    }

    public var bytesToDownload: UInt64 { (added + changed).totalBytes(\.size) }
}

extension BlockEntry {
    /// The one comparison `diff` and `sync` share: a client holding `installed` has this block
    /// when the content, the archive bytes and the archive's path are all the same.
    public func isSameDownload(as installed: BlockEntry) -> Bool {
        sha256 == installed.sha256 && contentHash == installed.contentHash && archive == installed.archive
    }
}
