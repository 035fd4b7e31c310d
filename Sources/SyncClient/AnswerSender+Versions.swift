import Foundation
import SafeText

/// Asking the plugin's block-versions endpoint which of the device's blocks changed on the LMS
/// since they were downloaded, before sending answers to them (`docs/offline-sync-api.md`).
extension AnswerSender {
    public struct VersionCheck: Sendable, Equatable {
        /// Usage id → the LMS's current `content_hash`, for blocks whose version differs.
        public var outdated: [String: String] = [:]
        /// Blocks the course's last publish no longer has offline.
        public var removed: [String] = []
        /// False when the plugin has built no publish of the course yet (nothing is checked).
        public var published = true

        public init() {}
    }

    /// At most this many usage ids a request (the plugin's `MAX_VERSION_QUERIES`).
    static let versionQueryLimit = 5_000

    public func blockVersionsURL() -> URL? {
        URL(string: "\(origin.base)/api/coursepack/v1/courses/\(OpaqueKey.pathSegment(courseID))/block-versions")
    }

    /// What the LMS says of `versions` (usage id → the installed `content_hash`); nil when it
    /// could not tell (no plugin, the LMS unreachable, a refusal): the answers then go as they
    /// would have, and the LMS still refuses one to a changed block (`content_changed`).
    public func checkVersions(_ versions: [String: String]) async -> VersionCheck? {
        guard let url = blockVersionsURL(), !versions.isEmpty else { return nil }
        var check = VersionCheck()
        let ids = versions.keys.sorted()
        for start in stride(from: 0, to: ids.count, by: Self.versionQueryLimit) {
            let part = ids[start..<min(start + Self.versionQueryLimit, ids.count)]
            let query = Dictionary(uniqueKeysWithValues: part.map { ($0, versions[$0] ?? "") })
            guard let body = try? JSONSerialization.data(withJSONObject: ["versions": query], options: [.sortedKeys, .withoutEscapingSlashes]),
                case .answered(200...299, let answer, false) = await send(url: url, body: body, contentType: "application/json", idempotencyKey: nil),
                let object = try? JSONSerialization.jsonObject(with: answer) as? [String: Any]
            else { return nil }
            if object["published"] as? Bool == false { check.published = false }
            for (id, value) in object["outdated"] as? [String: Any] ?? [:] where query[id] != nil {
                let current = (value as? [String: Any])?["current_version"] as? String
                check.outdated[id] = RemoteText.clean(current ?? "", limit: 128)
            }
            check.removed += (object["removed"] as? [String] ?? []).filter { query[$0] != nil }
        }
        return check
    }
}
