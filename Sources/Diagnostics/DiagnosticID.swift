/// A stable id for something coursepack reports (an error or a warning), so that an operator, a
/// script or a search engine can look it up: docs/diagnostics.md says what each means and what to
/// do. Ids never change meaning and are never reused; a retired id stays listed as retired.
///
/// Ranges: CP1xx reading a course export, CP2xx rendering and links, CP3xx building and archives,
/// CP4xx publishing, CP5xx the device and its sync, CP6xx serve and the LMS, CP9xx usage.
public struct DiagnosticID: Hashable, Sendable, CustomStringConvertible {
    /// "CP" and three digits.
    public let code: String
    /// What happened, in a few words, as listed in docs/diagnostics.md.
    public let summary: String

    public init(_ code: String, _ summary: String) {
        self.code = code
        self.summary = summary
    }

    public var description: String { code }

    /// Every id, in code order. Each area lists its own in a file of its own.
    public static var all: [DiagnosticID] {
        (courseExport + rendering + building + publishing + device + serving + usage).sorted { $0.code < $1.code }
    }
}

/// An error or a warning that carries a stable id; the command line prints it as
/// `error[CP101]: …` or `warning[CP101]: …`.
public protocol Diagnosable {
    var diagnosticID: DiagnosticID { get }
}

extension DiagnosticID {
    /// The prefix a command line puts before a message: `error[CP101]`, or just `error` when the
    /// value carries no id.
    public static func label(_ severity: String, for value: Any) -> String {
        guard let id = (value as? Diagnosable)?.diagnosticID else { return severity }
        return "\(severity)[\(id.code)]"
    }
}
