import Diagnostics

/// Why a course, or one file of it, could not be read. Each case names the file.
public enum CourseError: Error, Equatable, CustomStringConvertible {
    case notACourse(path: String, reason: String)
    case unreadable(path: String, reason: String)
    case malformedXML(path: String, XMLSyntaxError)
    case invalid(path: String, reason: String)
    case unsafeArchive(path: String, reason: String)

    public var description: String {
        switch self {
        case .notACourse(let path, let reason): return "\(path): not an Open edX course export: \(reason)"
        case .unreadable(let path, let reason): return "\(path): cannot be read: \(reason)"
        case .malformedXML(let path, let error): return "\(path): malformed XML at \(error)"
        case .invalid(let path, let reason): return "\(path): \(reason)"
        case .unsafeArchive(let path, let reason): return "\(path): refused: \(reason)"
        }
    }

    public var path: String {
        switch self {
        case .notACourse(let p, _), .unreadable(let p, _), .malformedXML(let p, _), .invalid(let p, _),
            .unsafeArchive(let p, _):
            return p
        }
    }
}

extension CourseError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .notACourse: return .notACourse
        case .unreadable: return .unreadableFile
        case .malformedXML: return .malformedXML
        case .invalid: return .invalidCourse
        case .unsafeArchive: return .unsafeArchive
        }
    }
}

/// A problem that affects one block, not the whole course: the block (when known) is left out
/// and the problem reported.
public struct CourseIssue: Sendable, Equatable, Diagnosable {
    /// What kind of problem, for the operator: CP11x a block left out, CP12x a warning.
    public let id: DiagnosticID
    public let usageID: String?
    public let file: String
    public let message: String

    public init(_ id: DiagnosticID, usageID: String?, file: String, message: String) {
        self.id = id
        self.usageID = usageID
        self.file = file
        self.message = QuotedText.bounded(message)
    }

    public var diagnosticID: DiagnosticID { id }
}
