import Diagnostics

/// Why a block could not be rendered, naming the file.
public enum RenderError: Error, Equatable, CustomStringConvertible {
    case missingContent(path: String, reason: String)
    case template(path: String, reason: String)

    public var description: String {
        switch self {
        case .missingContent(let path, let reason): return "\(path): \(reason)"
        case .template(let path, let reason): return "template \(path): \(reason)"
        }
    }
}

extension RenderError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .missingContent: .contentUnreadable
        case .template: .templateUnusable
        }
    }
}
