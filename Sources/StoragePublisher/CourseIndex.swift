import FileSystem
import Foundation

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
