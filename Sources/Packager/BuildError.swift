import CourseExport
import Manifest
import Diagnostics

/// Why a build could not run at all. Nothing in the output folder has changed when these are thrown.
public enum BuildError: Error, CustomStringConvertible {
    case course(CourseError)
    case previousManifest(ManifestError)
    /// The new manifest could not be written; the previous one is still in place.
    case publish(ManifestError)
    case output(path: String, reason: String)
    case busy(path: String, waited: Double)
    case invalidOption(String)
    /// The new manifest is one clients would refuse (`ManifestWrite.refusals`); nothing was
    /// published and the previous publish is still in place.
    case refusedByClients([Diagnostic])

    public var description: String {
        switch self {
        case .course(let error): return "\(error)"
        case .previousManifest(let error): return "\(error)"
        case .publish(let error): return "\(error)"
        case .output(let path, let reason): return "\(path): \(reason)"
        case .busy(let path, let waited):
            return "\(path): another coursepack build holds the lock (waited \(waited) s; see --lock-timeout)"
        case .invalidOption(let message): return message
        case .refusedByClients(let refusals): return refusals.map { "\($0.file ?? ""): \($0.message)" }.joined(separator: "; ")
        }
    }
}

extension BuildError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        // The course export's own id, once its errors carry one.
        case .course(let error): (error as Any as? Diagnosable)?.diagnosticID ?? .courseNotLoaded
        case .previousManifest(let error), .publish(let error): error.diagnosticID
        case .output: .outputUnusable
        case .busy: .outputBusy
        case .invalidOption: .buildOptionInvalid
        case .refusedByClients: .manifestBeyondClientLimit
        }
    }
}
