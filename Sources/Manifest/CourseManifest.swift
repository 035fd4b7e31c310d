import Foundation

/// `manifest.json`: the contract between a publish and its clients. Field names and meanings
/// are documented in docs/formats.md and `schema/manifest.schema.json`.
public struct CourseManifest: Codable, Sendable, Equatable {
    public static let currentSchemaVersion = 2

    public var schemaVersion: Int
    public var courseID: String
    public var publishedAt: String
    public var generator: String
    /// Every published leaf block, in course order.
    public var blocks: [BlockEntry]
    /// The shared page runtime (jQuery, math rendering) the blocks that name it load; a client
    /// installs it once, beside the block folders. Absent when no page needs it.
    public var runtime: RuntimeArchive?
    /// The course's containers (the course, its chapters, sequentials and units, and any
    /// split test or other container), in course order, each with its children in order, so a
    /// client can show navigation without the LMS. Containers have no archive. Absent in
    /// manifests written before it existed.
    public var outline: [OutlineEntry]?
    /// The course's search index (`search/<hash>.zip`), which a client installs like the
    /// runtime. Absent in manifests written before it existed.
    public var search: SearchArchive?
    /// Every course file content the blocks, runtime and search index list, by SHA-256 (hex),
    /// published once each under `CourseFile.path`. Absent in manifests written before it
    /// existed; a client then downloads each block's whole archive.
    public var files: [String: CourseFile]?

    public init(courseID: String, publishedAt: String, generator: String, blocks: [BlockEntry], runtime: RuntimeArchive? = nil) {
        self.schemaVersion = Self.currentSchemaVersion
        self.courseID = courseID
        self.publishedAt = publishedAt
        self.generator = generator
        self.blocks = blocks
        self.runtime = runtime
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case courseID = "course_id"
        case publishedAt = "published_at"
        case generator
        case blocks
        case runtime
        case outline
        case search
        case files
    }
}

/// One container of the course outline.
public struct OutlineEntry: Codable, Sendable, Equatable {
    /// How deep containers may nest, the course root being level 1. Open edX nests about six
    /// deep (course, chapter, sequential, vertical, split_test or library_content, vertical);
    /// clients refuse a deeper outline, which can only be hostile and would exhaust a walker.
    public static let maximumDepth = 32

    public var usageID: String
    /// `course`, `chapter`, `sequential`, `vertical`, or another container type (`split_test`…).
    public var type: String
    public var displayName: String?
    /// Usage ids of its children in course order: containers listed in the outline and leaf
    /// blocks listed in `blocks` (a child that is in neither, one that failed to load, is skipped
    /// by clients).
    public var children: [String]

    public init(usageID: String, type: String, displayName: String?, children: [String]) {
        self.usageID = usageID
        self.type = type
        self.displayName = displayName
        self.children = children
    }

    enum CodingKeys: String, CodingKey {
        case usageID = "usage_id"
        case type
        case displayName = "display_name"
        case children
    }
}

public struct BlockEntry: Codable, Sendable, Equatable {
    public var usageID: String
    public var type: String
    public var displayName: String?
    /// Enclosing blocks, nearest first.
    public var parents: [String]
    /// Relative path of the archive; nil when the block is not available offline.
    public var archive: String?
    public var size: UInt64?
    /// SHA-256 of the archive file, hex.
    public var sha256: String?
    /// SHA-256 of the uncompressed content, hex; stable across zlib versions.
    public var contentHash: String?
    /// The publish time at which `content_hash` last changed.
    public var lastModified: String?
    public var offlineDownload: OfflineDownload?
    /// `false` for blocks that need the network; absent otherwise.
    public var offline: Bool?
    public var reason: String?
    /// What in the bundle still needs the network (external videos, embeds), when anything does.
    public var requiresNetwork: [String]?
    /// The runtime archive (`CourseManifest.runtime.archive`) the page loads scripts from.
    public var runtime: String?
    /// Who may see the block: user partition id (as a decimal string) → the group ids allowed
    /// in it, merged down the course tree as the LMS does (the block's own `group_access`, its
    /// ancestors', and the group of an enclosing split test). Absent when every learner sees it.
    public var groupAccess: [String: [Int]]?
    /// The nearest enclosing `split_test` and the group of it this block belongs to.
    public var splitTest: SplitTestGroupEntry?
    /// What the block's installed folder holds: each path → the SHA-256 of its content, a key of
    /// the manifest's `files`. The same paths and bytes as the block's archive. Absent in
    /// manifests written before it existed.
    public var files: FileListing?
    /// Exact bytes of the block's installed folder: the sum of its files' sizes, so a client
    /// plans within a budget before it downloads anything.
    public var unpackedSize: UInt64?

    public init(
        usageID: String, type: String, displayName: String?, parents: [String],
        archive: String? = nil, size: UInt64? = nil, sha256: String? = nil, contentHash: String? = nil,
        lastModified: String? = nil, offline: Bool? = nil, reason: String? = nil, requiresNetwork: [String]? = nil,
        runtime: String? = nil
    ) {
        self.usageID = usageID
        self.type = type
        self.displayName = displayName
        self.parents = parents
        self.archive = archive
        self.size = size
        self.sha256 = sha256
        self.contentHash = contentHash
        self.lastModified = lastModified
        self.offline = offline
        self.reason = reason
        self.requiresNetwork = requiresNetwork
        self.runtime = runtime
        if let archive, let size, let lastModified {
            offlineDownload = OfflineDownload(fileURL: archive, lastModified: lastModified, fileSize: size)
        }
    }

    public var isOffline: Bool { archive != nil && offline != false }

    /// Names another path for the archive (a staged copy), keeping `offline_download.file_url`
    /// pointing at it: relative, or under the same public base.
    public mutating func moveArchive(to path: String) {
        if let old = archive, let url = offlineDownload?.fileURL, url.hasSuffix(old) {
            offlineDownload?.fileURL = String(url.dropLast(old.count)) + path
        } else {
            offlineDownload?.fileURL = path
        }
        archive = path
    }

    /// `offline_download.file_url` as `base` + the archive's path: absolute for the official
    /// apps, which download it as it is; relative to the manifest when `base` is empty.
    public mutating func downloadURL(base: String) {
        guard let archive else { return }
        offlineDownload?.fileURL = base + archive
    }

    enum CodingKeys: String, CodingKey {
        case usageID = "usage_id"
        case type
        case displayName = "display_name"
        case parents
        case archive
        case size
        case sha256
        case contentHash = "content_hash"
        case lastModified = "last_modified"
        case offlineDownload = "offline_download"
        case offline
        case reason
        case requiresNetwork = "requires_network"
        case runtime
        case groupAccess = "group_access"
        case splitTest = "split_test"
        case files
        case unpackedSize = "unpacked_size"
    }

    /// Whether a learner in `groups` (user partition id → their group in it) sees this block:
    /// for every partition the block is restricted in, the learner's group must be one it
    /// allows. A learner in no group of a restricting partition does not see the block, as in
    /// the LMS.
    public func isVisible(toLearnerIn groups: [Int: Int]) -> Bool {
        for (partition, allowed) in groupAccess ?? [:] {
            guard let id = Int(partition), let group = groups[id], allowed.contains(group) else { return false }
        }
        return true
    }
}

/// A block's place in a split test (content experiment).
public struct SplitTestGroupEntry: Codable, Sendable, Equatable {
    /// Usage id of the `split_test` block.
    public var usageID: String
    public var userPartitionID: Int
    /// Absent when the split test's `group_id_to_child` names the block for no group.
    public var groupID: Int?

    public init(usageID: String, userPartitionID: Int, groupID: Int?) {
        self.usageID = usageID
        self.userPartitionID = userPartitionID
        self.groupID = groupID
    }

    enum CodingKeys: String, CodingKey {
        case usageID = "usage_id"
        case userPartitionID = "user_partition_id"
        case groupID = "group_id"
    }
}

extension CourseManifest {
    /// The blocks a learner in `groups` (user partition id → their group) sees, in course order.
    public func blocks(visibleToLearnerIn groups: [Int: Int]) -> [BlockEntry] {
        blocks.filter { $0.isVisible(toLearnerIn: groups) }
    }
}

/// The shape Open edX's own offline mode uses, so existing mobile code can read it.
public struct OfflineDownload: Codable, Sendable, Equatable {
    public var fileURL: String
    public var lastModified: String
    public var fileSize: UInt64

    enum CodingKeys: String, CodingKey {
        case fileURL = "file_url"
        case lastModified = "last_modified"
        case fileSize = "file_size"
    }
}
