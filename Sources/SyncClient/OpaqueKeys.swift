import Diagnostics
import Foundation
import SafeText

/// Open edX's opaque keys as far as the LMS client puts them into URLs: a course id
/// (`course-v1:ORG+NUM+RUN`, legacy `ORG/NUM/RUN`) and a usage id of that course
/// (`block-v1:ORG+NUM+RUN+type@T+block@ID`, legacy `i4x://ORG/NUM/T/ID`). The ids come from a
/// server's manifest, which is untrusted: one that does not parse is refused before any request.
///
/// The characters are opaque-keys' own (`ALLOWED_ID_CHARS = [\w\-~.:]`), narrowed on purpose:
/// of Python's Unicode `\w` only letters and decimal digits (NFKC folds other numbers, `⒈`
/// among them, into dots), and no `%` (which opaque-keys allows in block ids and legacy ids, and
/// which a server that decodes twice turns into `/` or `..`). A part made only of dots is refused.
public enum OpaqueKey {
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let id: String
        public let reason: String

        public var description: String { "\(RemoteText.clean(id, limit: 200)): \(reason); no answer was sent for it" }
    }

    /// A course key split into its parts.
    public struct Course: Sendable, Equatable {
        public let org: String
        public let number: String
        public let run: String
        public let legacy: Bool
    }

    static let asciiIDCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-~.:".unicodeScalars)
    static let maximumLength = 500

    static func isIDCharacter(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return asciiIDCharacters.contains(scalar) }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber: return true
        default: return false
        }
    }

    static func isPart(_ text: Substring) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy(isIDCharacter) && !text.allSatisfy { $0 == "." }
    }

    public static func course(_ id: String) throws(Invalid) -> Course {
        guard id.count <= maximumLength else { throw Invalid(id: id, reason: "the course id is longer than \(maximumLength) characters") }
        let parts: [Substring]
        let legacy: Bool
        if id.hasPrefix("course-v1:") {
            parts = id.dropFirst("course-v1:".count).split(separator: "+", omittingEmptySubsequences: false)
            legacy = false
        } else {
            parts = id.split(separator: "/", omittingEmptySubsequences: false)
            legacy = true
        }
        guard parts.count == 3, parts.allSatisfy(isPart) else {
            throw Invalid(id: id, reason: "not a course id (course-v1:ORG+NUM+RUN or ORG/NUM/RUN, each part letters, digits and _-~.:)")
        }
        return Course(org: String(parts[0]), number: String(parts[1]), run: String(parts[2]), legacy: legacy)
    }

    /// Checks that `usageID` is a block of `course`.
    public static func checkUsage(_ usageID: String, of course: Course, courseID: String) throws(Invalid) {
        guard usageID.count <= maximumLength else { throw Invalid(id: usageID, reason: "the usage id is longer than \(maximumLength) characters") }
        let owner: [Substring]
        if usageID.hasPrefix("block-v1:") {
            let parts = usageID.dropFirst("block-v1:".count).split(separator: "+", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[3].hasPrefix("type@"), parts[4].hasPrefix("block@"),
                isPart(parts[3].dropFirst(5)), isPart(parts[4].dropFirst(6)), parts[0..<3].allSatisfy(isPart)
            else { throw Invalid(id: usageID, reason: "not a usage id (block-v1:ORG+NUM+RUN+type@TYPE+block@ID)") }
            owner = Array(parts[0..<3])
        } else if usageID.hasPrefix("i4x://") {
            let parts = usageID.dropFirst("i4x://".count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy(isPart) else { throw Invalid(id: usageID, reason: "not a usage id (i4x://ORG/NUM/TYPE/ID)") }
            // A legacy location names no run: its org and number say which course it is of.
            owner = Array(parts[0..<2]) + [Substring(course.run)]
        } else {
            throw Invalid(id: usageID, reason: "not a usage id (block-v1:… or i4x://…)")
        }
        guard owner == [Substring(course.org), Substring(course.number), Substring(course.run)] else {
            throw Invalid(id: usageID, reason: "is not a block of course \(courseID)")
        }
    }

    /// `id` percent-encoded as one path segment: every byte but unreserved ASCII is encoded, so
    /// `/`, `?`, `#`, `%` and `\` cannot end the segment or be read as anything but data.
    public static func pathSegment(_ id: String) -> String {
        var unreserved = CharacterSet()
        unreserved.insert(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:@+")
        let encoded = id.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        // A segment of dots alone is a dot-segment however it is spelled; ids never are one.
        return encoded.allSatisfy({ $0 == "." }) ? encoded.replacingOccurrences(of: ".", with: "%2E") : encoded
    }
}

extension OpaqueKey.Invalid: Diagnosable {
    public var diagnosticID: DiagnosticID { .invalidOpaqueKey }
}
