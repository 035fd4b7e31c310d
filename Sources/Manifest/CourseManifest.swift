import Foundation

/// `manifest.json`: the contract between a publish and its clients. Field names and meanings
/// are documented in README.md and `schema/manifest.schema.json`.
public struct CourseManifest: Codable, Sendable, Equatable {
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var courseID: String
    public var publishedAt: String
    public var generator: String
    /// Every published leaf block, in course order.
    public var blocks: [BlockEntry]

    public init(courseID: String, publishedAt: String, generator: String, blocks: [BlockEntry]) {
        self.schemaVersion = Self.currentSchemaVersion
        self.courseID = courseID
        self.publishedAt = publishedAt
        self.generator = generator
        self.blocks = blocks
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case courseID = "course_id"
        case publishedAt = "published_at"
        case generator
        case blocks
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

    public init(
        usageID: String, type: String, displayName: String?, parents: [String],
        archive: String? = nil, size: UInt64? = nil, sha256: String? = nil, contentHash: String? = nil,
        lastModified: String? = nil, offline: Bool? = nil, reason: String? = nil, requiresNetwork: [String]? = nil
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
        if let archive, let size, let lastModified {
            offlineDownload = OfflineDownload(fileURL: archive, lastModified: lastModified, fileSize: size)
        }
    }

    public var isOffline: Bool { archive != nil && offline != false }

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
