import Foundation
import Diagnostics

/// Why a storage target refused or failed a request, naming the target and the operation.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// The credentials were refused (bad key, bad signature, expired token, no permission).
    case denied(location: String, operation: String, code: String, message: String)
    case noSuchBucket(bucket: String)
    /// Any other refusal from the server, after retries where they make sense.
    case http(location: String, operation: String, status: Int, code: String, message: String)
    /// The server could not be reached, after retries.
    case unreachable(location: String, operation: String, reason: String)
    /// A local file could not be read or written.
    case file(path: String, reason: String)

    public var description: String {
        switch self {
        case .denied(let location, let operation, let code, let message):
            return "\(location): \(operation) refused: \(code): \(message) (check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the --profile's credentials, and the bucket's permissions)"
        case .noSuchBucket(let bucket):
            return "s3://\(bucket): the bucket does not exist (check the name, --endpoint-url and --region)"
        case .http(let location, let operation, let status, let code, let message):
            return "\(location): \(operation) failed: HTTP \(status)\(code.isEmpty ? "" : " \(code)")\(message.isEmpty ? "" : ": \(message)")"
        case .unreachable(let location, let operation, let reason):
            return "\(location): \(operation) failed: \(reason)"
        case .file(let path, let reason):
            return "\(path): \(reason)"
        }
    }

    /// Credentials or bucket problems: nothing can be published, and nothing was.
    public var isAccessProblem: Bool {
        switch self {
        case .denied, .noSuchBucket: return true
        default: return false
        }
    }
}

extension StoreError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .denied: .storageDenied
        case .noSuchBucket: .bucketMissing
        case .http: .storageFailed
        case .unreachable: .storageUnreachable
        case .file: .localFileUnreadable
        }
    }
}
