import Foundation
import FileSystem
import Diagnostics

/// Why a manifest could not be read or written, naming the file.
public enum ManifestError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    /// Writing the manifest failed: nothing replaced the manifest already there.
    case unwritable(path: String, reason: String)
    case invalid(path: String, reason: String)
    case newerSchema(path: String, version: Int)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): cannot be read: \(reason)"
        case .unwritable(let path, let reason): return "\(path): cannot be written: \(reason)"
        case .invalid(let path, let reason): return "\(path): not a valid coursepack manifest: \(reason)"
        case .newerSchema(let path, let version):
            return "\(path): schema_version \(version) is newer than this coursepack understands (\(CourseManifest.currentSchemaVersion)); refusing to touch it"
        }
    }
}

extension ManifestError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .unreadable: .manifestUnreadable
        case .unwritable: .manifestUnwritable
        case .invalid: .manifestInvalid
        case .newerSchema: .manifestNewer
        }
    }
}
