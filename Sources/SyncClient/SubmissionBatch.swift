import FileSystem
import Foundation
import SafeText

/// One request to the LMS's submissions endpoint (`docs/offline-sync-api.md`) and the results it
/// answers with.
struct SubmissionBatch {
    static let itemLimit = 100

    /// The items in the order given, each under the id it is sent with.
    let entries: [AnswerEntry]
    /// The block's version for an entry that recorded none: the server manifest's.
    let versions: [String: String]

    /// The id an entry is sent under: its own when it is 1–64 plain characters, else a hash of
    /// it, so an id a page chose (up to 1,000 bytes) still names the item the same on every try.
    static func itemID(for id: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:+@".unicodeScalars)
        if !id.isEmpty, id.unicodeScalars.count <= 64, id.unicodeScalars.allSatisfy(plain.contains) { return id }
        return "sha256-" + SHA256Hex.of(Array(id.utf8)).prefix(57)
    }

    /// The body, with `sent_at` read now: the LMS corrects every item's time by the difference
    /// between its clock and this one, so it must be the clock's reading at sending.
    func body() -> Data? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let items: [[String: Any]] = entries.map { entry in
            var item: [String: Any] = [
                "id": Self.itemID(for: entry.id), "usage_id": entry.usageID, "timestamp": entry.timestamp,
                "answers": entry.fields.reduce(into: [String: Any]()) { form, field in
                    form[field.key] = field.key.hasSuffix("[]") || field.value.count != 1 ? field.value : field.value[0]
                },
            ]
            if let version = entry.contentHash ?? versions[entry.usageID] { item["version"] = version }
            return item
        }
        let body: [String: Any] = ["sent_at": formatter.string(from: Date()), "items": items]
        return try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    /// One item's result as the LMS gave it, its text cleaned for showing.
    struct Result {
        var status: String
        var message: String?
        var held: String?
        var kept: LMSResult
        /// Seconds not to send it again before, for a `retry`.
        var retryAfter: Double?
    }

    /// Results by item id; nil when the body is not the endpoint's answer. A result whose id no
    /// item of this batch carries is left out, and so is a second result for the same id.
    func results(in body: Data) -> [String: Result]? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let list = object["results"] as? [Any]
        else { return nil }
        let sent = Set(entries.map { Self.itemID(for: $0.id) })
        var found: [String: Result] = [:]
        for case let item as [String: Any] in list {
            guard let id = item["id"] as? String, sent.contains(id), found[id] == nil, let result = Self.result(item) else { continue }
            found[id] = result
        }
        return found
    }

    static func result(_ item: [String: Any]) -> Result? {
        func text(_ key: String, limit: Int = 1000) -> String? { (item[key] as? String).map { RemoteText.clean($0, limit: limit) } }
        func number(_ value: Any?) -> Double? { (value as? NSNumber).map(\.doubleValue).flatMap { $0.isFinite ? $0 : nil } }
        guard let status = text("status", limit: 32) else { return nil }
        var kept = LMSResult(status: status)
        kept.reason = text("reason", limit: 64) ?? text("held", limit: 64)
        kept.correctness = text("correctness", limit: 64)
        let score = item["score"] as? [String: Any]
        kept.earned = number(score?["earned"])
        kept.possible = number(score?["possible"])
        kept.attemptsUsed = number(item["attempts_used"]).map { Int(max(0, min($0, 1e9))) }
        kept.feedbackHTML = (item["feedback_html"] as? String).map { FeedbackHTML.clean($0) }
        let retryAfter = number(item["retry_after"]).map { min(max($0, 0), 86_400) }
        return Result(status: status, message: text("message"), held: text("held", limit: 64), kept: kept, retryAfter: retryAfter)
    }
}
