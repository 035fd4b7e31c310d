import Crypto
import FileSystem
import Foundation
import Manifest
import Diagnostics

/// Why a publish stopped, and whether it had changed the target.
public enum PublishError: Error, CustomStringConvertible {
    /// The local folder is not a complete publish.
    case local(path: String, reason: String)
    /// The target refused or failed; `changedTarget` says whether anything had been written.
    case store(StoreError, changedTarget: Bool)
    case remoteManifest(ManifestError)
    /// The target's manifest is another course's: replacing it would erase that course.
    case otherCourse(manifest: String, found: String, publishing: String)

    public var description: String {
        switch self {
        case .local(let path, let reason): return "\(path): \(reason)"
        case .store(let error, let changed):
            return "\(error)" + (changed ? " (the publish stopped before its manifest: clients still get the previous publish, complete)" : " (nothing was changed)")
        case .remoteManifest(let error): return "\(error) (nothing was changed)"
        case .otherCourse(let manifest, let found, let publishing):
            return "\(manifest) is the manifest of course \(found), not \(publishing): refusing to replace another course's publish (nothing was changed; publish without --flat to give each course its own folder, or choose another --to)"
        }
    }

    /// Nothing was written to the target.
    public var changedNothing: Bool {
        if case .store(_, let changed) = self { return !changed }
        return true
    }
}

extension PublishError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .local: .localPublishIncomplete
        case .store(let error, _): error.diagnosticID
        case .remoteManifest(let error): error.diagnosticID
        case .otherCourse: .targetHoldsOtherCourse
        }
    }
}
