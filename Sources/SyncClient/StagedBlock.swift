import Foundation

/// A block downloaded, verified and unpacked into its staging folder, waiting to be swapped in.
struct StagedBlock: Sendable {
    let usageID: String
    /// `<type>/<name>`, relative to the target.
    let folder: String
    /// The archive's, which keys its inventory.
    let sha256: String
    /// `TARGET/<type>/<name>`, the install folder: `parent` + `/` + `name`.
    let final: String
    /// `<parent>/.<name>.new-<pid>-<n>`, beside `final`: unique to this sync.
    let staging: String
    /// Whether this sync wrote its inventory (rather than finding the same archive's there),
    /// and so removes it when the block is not installed.
    var ownsInventory = false
    /// Bytes transferred for it.
    var transferred: UInt64 = 0
    /// What its staging folder holds besides links into the content store (an unpacked
    /// archive, or copies where the file system refuses links): the bytes a batch of staged
    /// blocks adds to the disk until it is swapped in.
    var stagedBytes: UInt64 = 0

    init(usageID: String, folder: String, sha256: String, target: String) {
        (self.usageID, self.folder, self.sha256) = (usageID, folder, sha256)
        final = target + "/" + folder
        let slash = folder.lastIndex(of: "/")
        let parent = target + "/" + (slash.map { String(folder[..<$0]) } ?? "")
        let name = slash.map { String(folder[folder.index(after: $0)...]) } ?? folder
        staging = parent + "/.\(name).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    /// `TARGET/<type>`.
    var parent: String { (staging as NSString).deletingLastPathComponent }
    /// The install folder's own name.
    var name: String { (final as NSString).lastPathComponent }
}

/// A block swapped into place; `previous` holds the version it replaced (nil when there was
/// none) until a local manifest names the new one, so that the swap can be undone.
struct SwappedBlock: Sendable {
    var index: Int
    var block: StagedBlock
    var previous: String?
}
