import FileSystem
import Foundation

/// Where a course goes within the target.
public enum PublishLayout: Sendable, Equatable {
    /// Under its own folder, `CourseFolder.name(for:)`: many courses share one target.
    case perCourse
    /// At the target itself, for clients already pointed there. A manifest of another course
    /// there is never replaced.
    case flat
}

/// The folder of a course within a shared target.
public enum CourseFolder {
    /// `course-v1:Org+Num+Run` → `course-v1_3AOrg_2BNum_2BRun-<8 hex>`: every UTF-8 byte of the id
    /// outside `A-Z a-z 0-9 - .` (and a leading `.`) becomes `_` and its two hex digits, then
    /// `-` and the first 8 hex digits of the id's SHA-256 follow. The escaping can be undone, so
    /// two ids never share a folder; the hash keeps ids that differ only in case apart on
    /// case-insensitive file systems. An escaped id longer than 150 characters keeps its first
    /// 100 and the whole SHA-256 instead, so the name stays within a file name's 255 bytes.
    public static func name(for courseID: String) -> String {
        let digest = SHA256Hex.of(Array(courseID.utf8))
        var escaped = ""
        for (offset, byte) in courseID.utf8.enumerated() {
            if Self.keeps(byte, first: offset == 0) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "_" + String(format: "%02X", byte)
            }
        }
        guard escaped.count <= 150 else { return String(escaped.prefix(100)) + "-" + digest }
        return escaped + "-" + String(digest.prefix(8))
    }

    private static func keeps(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            return true
        case UInt8(ascii: "."):
            // A leading dot would make a hidden folder, which web servers often refuse to serve.
            return !first
        default:
            return false
        }
    }
}

/// A store seen from inside one of its folders: every key gets `prefix/` in front.
struct PrefixedStore: ObjectStore {
    let inner: any ObjectStore
    let prefix: String

    var location: String { inner.location + "/" + prefix }

    private func full(_ key: String) -> String { prefix + "/" + key }

    func head(_ key: String) async throws(StoreError) -> StoredObject? { try await inner.head(full(key)) }
    func get(_ key: String) async throws(StoreError) -> Data? { try await inner.get(full(key)) }
    func put(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError) {
        try await inner.put(full(key), file: file, metadata: metadata)
    }
    func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
        try await inner.put(full(key), data: data, metadata: metadata)
    }
    func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
        try await inner.copy(full(source), to: full(key), metadata: metadata)
    }
    func delete(_ key: String) async throws(StoreError) { try await inner.delete(full(key)) }
}

/// `courses.json` at the target's root: every course published there, by id, with where its
/// manifest is. Written after the course's manifest and merged with what is there, so it never
/// names a manifest that is not in place yet, nor drops another course.
public struct CourseIndex: Codable, Sendable, Equatable {
    public static let key = "courses.json"

    public struct Entry: Codable, Sendable, Equatable {
        /// The course's folder within the target; empty for a flat publish.
        public var prefix: String
        /// The manifest's key within the target.
        public var manifest: String
        public var publishedAt: String

        public init(prefix: String, manifest: String, publishedAt: String) {
            self.prefix = prefix
            self.manifest = manifest
            self.publishedAt = publishedAt
        }

        enum CodingKeys: String, CodingKey {
            case prefix, manifest
            case publishedAt = "published_at"
        }
    }

    public var version = 1
    public var courses: [String: Entry] = [:]

    public init(courses: [String: Entry] = [:]) {
        self.courses = courses
    }

    /// Nil when `data` is something else than an index: it is then left as it is.
    static func decode(_ data: Data?) -> CourseIndex? {
        guard let data else { return CourseIndex() }
        return try? JSONDecoder().decode(CourseIndex.self, from: data)
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }
}
