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

    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(path): \(operation) failed: \(String(cString: strerror(errno)))" }
}

extension FileError: Diagnosable {
    public var diagnosticID: DiagnosticID { .fileCallFailed }
}
