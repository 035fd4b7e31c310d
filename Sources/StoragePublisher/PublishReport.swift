import Foundation

/// What a publish did (or, with `--dry-run`, would do); `--report FILE` writes it as JSON.
public struct PublishReport: Codable, Sendable, Equatable {
    public struct Upload: Codable, Sendable, Equatable {
        public var key: String
        public var bytes: UInt64
        /// `new` (the target had no such object) or `changed` (its size or sha256 differed).
        public var reason: String
        /// Where it went up first when the live manifest names `key` (see PublishRecord).
        public var stagedAs: String?

        enum CodingKeys: String, CodingKey {
            case key, bytes, reason
            case stagedAs = "staged_as"
        }
    }

    public struct Scheduled: Codable, Sendable, Equatable {
        public var key: String
        public var deleteAfter: String
        enum CodingKeys: String, CodingKey {
            case key
            case deleteAfter = "delete_after"
        }
    }

    public var target: String
    public var dryRun: Bool
    public var courseID = ""
    /// The course's folder within the target (`CourseFolder.name(for:)`); empty when flat.
    public var coursePrefix = ""
    /// Where the course's manifest went (`…/manifest.json`): clients are pointed at its folder.
    public var manifest = ""
    /// The target's `courses.json`, when it was read (and updated if needed).
    public var index: String?
    public var warnings: [String] = []
    public var uploads: [Upload] = []
    public var unchanged = 0
    public var manifestUploaded = false
    public var deleted: [String] = []
    public var scheduledDeletions: [Scheduled] = []
    /// Every write to the target, in order (`PUT html/x.zip`, `PUT manifest.json`, `DELETE …`).
    public var writes: [String] = []
    public var bytesUploaded: UInt64 = 0
    public var seconds = 0.0

    enum CodingKeys: String, CodingKey {
        case target, uploads, unchanged, deleted, writes, seconds, manifest, index, warnings
        case courseID = "course_id"
        case coursePrefix = "course_prefix"
        case dryRun = "dry_run"
        case manifestUploaded = "manifest_uploaded"
        case scheduledDeletions = "scheduled_deletions"
        case bytesUploaded = "bytes_uploaded"
    }

    public func json() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }
}
