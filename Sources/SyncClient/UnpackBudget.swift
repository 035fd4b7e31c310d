import Synchronization

/// The bytes one sync may unpack, across all its blocks (`--max-unpacked-bytes`): each archive's
/// limits bound one block, and this bounds a manifest of many blocks that each pass them.
///
/// A block reserves what its archive's central directory declares before anything is unpacked
/// (`ZipReader` stops an entry that inflates past its declared size, so the declaration is an
/// upper bound): a block that does not fit is refused whole, its installed version kept, and
/// once one is refused the blocks after it are refused before they are downloaded.
final class UnpackBudget: Sendable {
    let limit: UInt64
    private let state = Mutex<(used: UInt64, exhausted: Bool)>((0, false))

    init(limit: UInt64) { self.limit = limit }

    var isExhausted: Bool { state.withLock { $0.exhausted } }

    /// Takes `bytes` from the budget; false, and the budget marked exhausted, when they do not fit.
    func reserve(_ bytes: UInt64) -> Bool {
        state.withLock { state in
            let (total, overflow) = state.used.addingReportingOverflow(bytes)
            guard !overflow, total <= limit, !state.exhausted else {
                state.exhausted = true
                return false
            }
            state.used = total
            return true
        }
    }

    /// Gives back what a block reserved and then did not install.
    func release(_ bytes: UInt64) {
        state.withLock { $0.used -= min($0.used, bytes) }
    }
}
