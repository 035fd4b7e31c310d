/// A block downloaded, verified and unpacked into its staging folder, waiting to be swapped in.
struct StagedBlock: Sendable {
    var usageID: String
    /// `<type>/<name>`, relative to the target.
    var folder: String
    /// The archive's, which keys its inventory.
    var sha256: String
    /// Whether this sync wrote its inventory (rather than finding the same archive's there),
    /// and so removes it when the block is not installed.
    var ownsInventory: Bool
    /// `<parent>/.<name>.new-<pid>-<n>`, beside `final`.
    var staging: String
    /// `TARGET/<type>/<name>`.
    var final: String
    var parent: String
    var name: String
    /// Bytes transferred for it.
    var transferred: UInt64
}

/// A block swapped into place; `previous` holds the version it replaced (nil when there was
/// none) until a local manifest names the new one, so that the swap can be undone.
struct SwappedBlock: Sendable {
    var index: Int
    var block: StagedBlock
    var previous: String?
}
