import Diagnostics
import Manifest

public enum SyncError: Error, Equatable, CustomStringConvertible {
    case unreachable(source: String, reason: String)
    case http(url: String, status: Int)
    case manifest(ManifestError)
    case unsafeManifest(source: String, reason: String)
    case verification(archive: String, reason: String)
    case local(path: String, reason: String)
    /// The target holds another course than the source offers (and replacing it was not asked).
    case otherCourse(target: String, installed: String, offered: String)
    /// Unpacking the archive would take the sync past its budget of unpacked bytes.
    case unpackBudget(archive: String, limit: UInt64)

    public var description: String {
        switch self {
        case .unreachable(let source, let reason): return "\(source): cannot be reached: \(reason)"
        case .http(let url, let status): return "\(url): the server answered HTTP \(status)"
        case .manifest(let error): return "\(error)"
        case .unsafeManifest(let source, let reason): return "\(source): refused: \(reason)"
        case .verification(let archive, let reason): return "\(archive): \(reason)"
        case .local(let path, let reason): return "\(path): \(reason)"
        case .otherCourse(let target, let installed, let offered):
            return "\(target) holds course \(installed), the source offers \(offered): refusing to replace it; nothing was changed (--replace-course replaces it)"
        case .unpackBudget(let archive, let limit):
            return "\(archive): not unpacked, the sync would unpack more than its budget of \(limit) bytes (--max-unpacked-bytes); the installed version is kept"
        }
    }
}

extension SyncError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .unreachable: return .sourceUnreachable
        case .http: return .sourceHTTPError
        case .manifest: return .localManifestUnreadable
        case .unsafeManifest: return .unsafeManifest
        case .verification: return .archiveMismatch
        case .local: return .deviceFileError
        case .otherCourse: return .otherCourse
        case .unpackBudget: return .unpackBudget
        }
    }
}
