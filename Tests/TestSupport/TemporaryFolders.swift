import Foundation
import Synchronization

/// The folders `TestSupport.temporaryFolder` made, removed when the process exits.
final class TemporaryFolders: Sendable {
    static let shared = TemporaryFolders()

    private let paths = Mutex<[String]>([])

    private init() {
        guard ProcessInfo.processInfo.environment["COURSEPACK_KEEP_TEST_FILES"] != "1" else { return }
        atexit { TemporaryFolders.shared.removeAll() }
    }

    func add(_ path: String) {
        paths.withLock { $0.append(path) }
    }

    /// Best effort: a folder a test made unreadable, or one a process still writes to, stays.
    private func removeAll() {
        for path in paths.withLock({ $0 }) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
