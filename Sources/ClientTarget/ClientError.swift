import Diagnostics
import SyncClient

public enum ClientError: Error, Equatable, CustomStringConvertible {
    case notATarget(path: String, reason: String)
    case unknownID(id: String, course: String?)
    case notInstalled(blockID: String, reason: String)
    case pinnedOverBudget(pinned: UInt64, budget: UInt64)
    case locked(path: String)
    case invalidRequest(String)
    case local(path: String, reason: String)
    case sync(SyncError)

    public var description: String {
        switch self {
        case .notATarget(let path, let reason): return "\(path): not a coursepack target: \(reason)"
        case .unknownID(let id, let course): return "\(id): no such block or container\(course.map { " in \($0)" } ?? " in this target")"
        case .notInstalled(let id, let reason): return "\(id): \(reason)"
        case .pinnedOverBudget(let pinned, let budget):
            return "the pinned content takes \(pinned) bytes, \(pinned - budget) bytes over the budget of \(budget) bytes; nothing was downloaded"
        case .locked(let path): return "\(path): another sync into this target is running"
        case .invalidRequest(let reason): return reason
        case .local(let path, let reason): return "\(path): \(reason)"
        case .sync(let error): return "\(error)"
        }
    }
}

extension ClientError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .notATarget: return .notATarget
        case .unknownID: return .unknownBlock
        case .notInstalled: return .notInstalled
        case .pinnedOverBudget: return .pinnedOverBudget
        case .locked: return .targetLocked
        case .invalidRequest: return .invalidSyncRequest
        case .local: return .deviceFileError
        case .sync(let error): return error.diagnosticID
        }
    }
}
