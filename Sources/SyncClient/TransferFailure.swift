import Diagnostics
import Foundation

enum TransferFailure: Error, CustomStringConvertible {
    case noAnswer(seconds: Double)
    case tooLarge(limit: Int)
    case longerThanPromised(bytes: UInt64)
    case tooSlow(seconds: Double)

    var description: String {
        switch self {
        case .noAnswer(let seconds): return "no answer within \(seconds) s (see --connect-timeout)"
        case .tooLarge(let limit): return "larger than \(limit >> 20) MiB"
        case .longerThanPromised(let bytes): return "the server sent more than the \(bytes) bytes the manifest promises; cut off"
        case .tooSlow(let seconds): return "not finished within \(Int(seconds)) s (slower than --min-speed)"
        }
    }
}

// Wrapped into `SyncError.unreachable` (or `.unsafeManifest`, a manifest too large) before anyone sees it.
extension TransferFailure: Diagnosable {
    var diagnosticID: DiagnosticID {
        switch self {
        case .tooLarge: return .unsafeManifest
        case .noAnswer, .longerThanPromised, .tooSlow: return .sourceUnreachable
        }
    }
}
