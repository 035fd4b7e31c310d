#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Diagnostics

/// A file call that failed: the file, what was being done, and the system's reason.
public struct FileError: Error, Equatable, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let errno: Int32
    /// What is wrong when no system error says it (a FIFO where a file was expected).
    public let reason: String?

    public init(path: String, operation: String, errno: Int32, reason: String? = nil) {
        self.path = path
        self.operation = operation
        self.errno = errno
        self.reason = reason
    }

    public var description: String { "\(path): \(operation) failed: \(reason ?? String(cString: strerror(errno)))" }
}

extension FileError: Diagnosable {
    public var diagnosticID: DiagnosticID { .fileCallFailed }
}
