/// A block downloaded, verified and unpacked into its staging folder, waiting to be swapped in.
struct StagedBlock: Sendable {
    /// `<parent>/.<name>.new-<pid>-<n>`, beside `final`.
    var staging: String
    /// `TARGET/<type>/<name>`.
    var final: String
    var parent: String
    var name: String
    /// Bytes transferred for it.
    var transferred: UInt64
}
