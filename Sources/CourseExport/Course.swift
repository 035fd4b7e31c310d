/// A published course: its identity and its blocks in course order (depth first, as a learner
/// meets them), with the static files it can reference.
public struct Course: Sendable {
    public let org: String
    public let number: String
    public let run: String
    public let displayName: String
    public let language: String
    /// Folder holding `course.xml`.
    public let root: String
    public let blocks: [Block]
    public let staticFiles: StaticIndex
    /// Blocks that could not be read; each left out with its reason.
    public let issues: [CourseIssue]

    public var id: String { "course-v1:\(org)+\(number)+\(run)" }

    public func usageID(type: String, urlName: String) -> String {
        "block-v1:\(org)+\(number)+\(run)+type@\(type)+block@\(urlName)"
    }

    public func block(withUsageID id: String) -> Block? { blocks.first { $0.usageID == id } }
}

public struct Block: Sendable {
    public static let containerTypes: Set<String> = [
        "course", "chapter", "sequential", "vertical", "split_test", "library_content",
        "videosequence", "conditional",
    ]

    public let type: String
    public let urlName: String
    public let usageID: String
    public let displayName: String?
    /// The definition's attributes, overridden by the pointer's and then by policy.json.
    public let attributes: [String: String]
    /// The defining element, with its inline children (problem XML, video sources, inline HTML).
    public let definition: XMLElement
    /// The bytes the definition was parsed from, so inline content can be taken verbatim.
    public let definitionSource: [UInt8]
    /// Export-relative path of the file that defines the block.
    public let file: String
    /// Usage ids of the enclosing blocks, nearest first (vertical, sequential, chapter, course).
    public let parents: [String]
    public internal(set) var children: [String]

    public var isContainer: Bool { Self.containerTypes.contains(type) }
}
