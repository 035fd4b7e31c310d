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
    /// What was read differently from how it is written, as the LMS import does it (a
    /// duplicate url_name renamed, a course without `org`), each with what was done instead.
    public let warnings: [CourseIssue]
    /// The plain block files the load read ahead (`TYPE/*.xml`), in path order, each with the
    /// stamp it had: what a later load may take as `KnownBlockFiles`. Empty unless the load was
    /// given `KnownBlockFiles` (none known is an empty set).
    public let readBlockFiles: [ReadBlockFile]

    public var id: String { "course-v1:\(org)+\(number)+\(run)" }

    public func usageID(type: String, urlName: String) -> String {
        "block-v1:\(org)+\(number)+\(run)+type@\(type)+block@\(urlName)"
    }

    public func block(withUsageID id: String) -> Block? { blocks.first { $0.usageID == id } }
}

public struct Block: Sendable {
    /// Characters of a display name kept (CP125): a name is copied into every descendant's
    /// search entry and breadcrumbs.
    public static let displayNameLimit = 1000

    public static let containerTypes: Set<String> = [
        "course", "chapter", "sequential", "vertical", "split_test", "library_content",
        "videosequence", "conditional",
    ]

    public var type: String { fields.type }
    public var urlName: String { fields.urlName }
    public var usageID: String { fields.usageID }
    public var displayName: String? { fields.displayName }
    /// The definition's attributes, overridden by the pointer's and then by policy.json.
    public var attributes: [String: String] { fields.attributes }
    /// The defining element, with its inline children (problem XML, video sources, inline HTML).
    public var definition: XMLElement { fields.definition }
    /// The bytes the definition was parsed from, so inline content can be taken verbatim.
    public var definitionSource: [UInt8] { fields.definitionSource }
    /// Export-relative path of the file that defines the block.
    public var file: String { fields.file }
    /// Usage ids of the enclosing blocks, nearest first (vertical, sequential, chapter, course).
    public var parents: [String] { fields.parents }
    public internal(set) var children: [String]
    /// Who may see the block, as the LMS merges it down the tree: user partition id → the
    /// group ids allowed in it. The block's own `group_access`, its ancestors' and the group
    /// of an enclosing `split_test` all apply; an empty list means no group sees it. Empty
    /// when every learner sees the block.
    public var groupAccess: [Int: [Int]] { fields.groupAccess }
    /// The nearest enclosing `split_test` and the group this block belongs to there.
    public var splitTestGroup: SplitTestGroup? { fields.splitTestGroup }
    /// For an html block with `filename`: the export-relative file holding its HTML, found the
    /// way the LMS looks for it. Nil when the HTML is the content of the block's element.
    public var htmlFile: String? { fields.htmlFile }

    public var isContainer: Bool { fields.isContainer }

    /// What the walk read, in one object: every pass over the course (a filter, a parallel
    /// map) copies blocks, and a copy of a dozen fields retained and released each of them.
    /// At 100,000 blocks those retains touched a million objects per pass.
    private final class Fields: Sendable {
        let type: String
        let urlName: String
        let usageID: String
        let displayName: String?
        let attributes: [String: String]
        let definition: XMLElement
        let definitionSource: [UInt8]
        let file: String
        let parents: [String]
        let groupAccess: [Int: [Int]]
        let splitTestGroup: SplitTestGroup?
        let htmlFile: String?
        let isContainer: Bool

        init(
            type: String, urlName: String, usageID: String, displayName: String?, attributes: [String: String], definition: XMLElement,
            definitionSource: [UInt8], file: String, parents: [String], groupAccess: [Int: [Int]], splitTestGroup: SplitTestGroup?,
            htmlFile: String?
        ) {
            self.type = type
            self.urlName = urlName
            self.usageID = usageID
            self.displayName = displayName
            self.attributes = attributes
            self.definition = definition
            self.definitionSource = definitionSource
            self.file = file
            self.parents = parents
            self.groupAccess = groupAccess
            self.splitTestGroup = splitTestGroup
            self.htmlFile = htmlFile
            isContainer = Block.containerTypes.contains(type)
        }
    }

    private let fields: Fields

    init(
        type: String, urlName: String, usageID: String, displayName: String?, attributes: [String: String], definition: XMLElement,
        definitionSource: [UInt8], file: String, parents: [String], children: [String], groupAccess: [Int: [Int]],
        splitTestGroup: SplitTestGroup?, htmlFile: String?
    ) {
        fields = Fields(
            type: type, urlName: urlName, usageID: usageID, displayName: displayName, attributes: attributes, definition: definition,
            definitionSource: definitionSource, file: file, parents: parents, groupAccess: groupAccess, splitTestGroup: splitTestGroup,
            htmlFile: htmlFile)
        self.children = children
    }
}

/// Membership of a block in one group of a `split_test` (an A/B experiment or content
/// experiment): a learner sees the block when the LMS put them in `groupID` of the user
/// partition `userPartitionID`.
public struct SplitTestGroup: Sendable, Equatable {
    /// Usage id of the `split_test` block.
    public let splitTest: String
    public let userPartitionID: Int
    /// Nil when `group_id_to_child` names the child for no group: the LMS shows it to nobody.
    public let groupID: Int?

    public init(splitTest: String, userPartitionID: Int, groupID: Int?) {
        self.splitTest = splitTest
        self.userPartitionID = userPartitionID
        self.groupID = groupID
    }
}
