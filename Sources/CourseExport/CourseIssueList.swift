import Diagnostics

/// The problems found in a course, each file's kept to a bound per kind: one vertical of
/// 500,000 empty `<html/>` elements once gave 500,000 warnings, a 124 MB report and 107 MB of
/// build state. Past `perFileLimit` of one kind in one file, one more issue says how many more
/// there are.
struct CourseIssueList: Sendable {
    static let perFileLimit = 20

    private(set) var listed: [CourseIssue] = []
    private var counts: [Key: Int] = [:]
    /// The keys past the limit, in the order they passed it, with their kind.
    private var overflowed: [(key: Key, id: DiagnosticID)] = []

    private struct Key: Hashable, Sendable {
        let file: String
        let id: String
    }

    mutating func append(_ issue: CourseIssue) {
        let key = Key(file: issue.file, id: issue.id.code)
        let count = counts[key, default: 0] + 1
        counts[key] = count
        if count <= Self.perFileLimit {
            listed.append(issue)
        } else if count == Self.perFileLimit + 1 {
            overflowed.append((key, issue.id))
        }
    }

    /// The issues listed, then a count for each file and kind past the limit.
    var all: [CourseIssue] {
        listed + overflowed.map { key, id in
            let count = counts[key, default: 0]
            return CourseIssue(id, usageID: nil, file: key.file, message: "\(count - Self.perFileLimit) more like these in this file are not listed (a file lists its first \(Self.perFileLimit) of a kind)")
        }
    }
}
