import Foundation

/// The block tree as `coursepack inspect --json` prints it: what a script (or the differential
/// test against the LMS's import) needs to compare ids, without coursepack's rendering.
public struct CourseOutline: Encodable {
    public struct Entry: Encodable {
        let usage_id: String
        let type: String
        let url_name: String
        let parent: String?
        let children: [String]
        let file: String
    }

    public struct Problem: Encodable {
        let id: String
        let file: String
        let usage_id: String?
        let message: String
    }

    let course_id: String
    let blocks: [Entry]
    let warnings: [Problem]
    let errors: [Problem]

    public init(_ course: Course) {
        course_id = course.id
        blocks = course.blocks.map {
            Entry(usage_id: $0.usageID, type: $0.type, url_name: $0.urlName, parent: $0.parents.first, children: $0.children, file: $0.file)
        }
        warnings = course.warnings.map(Self.problem)
        errors = course.issues.map(Self.problem)
    }

    private static func problem(_ issue: CourseIssue) -> Problem {
        Problem(id: issue.id.code, file: issue.file, usage_id: issue.usageID, message: issue.message)
    }

    /// Pretty-printed JSON with sorted keys, so two runs compare byte for byte.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
