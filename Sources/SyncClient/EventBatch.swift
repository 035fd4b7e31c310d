import Foundation
import SafeText

/// One request to the plugin's events endpoint (`docs/offline-sync-api.md`) and its results.
struct EventBatch {
    static let itemLimit = 100

    let events: [EventEntry]

    /// The body, with `sent_at` read now: the LMS corrects each event's time by the difference
    /// between its clock and this one.
    func body(now: Date = Date()) -> Data? {
        let items: [[String: Any]] = events.map { event in
            var item: [String: Any] = [
                "id": SubmissionBatch.itemID(for: event.id), "name": event.name, "timestamp": event.timestamp,
                "data": event.data.foundationObject,
            ]
            if let usageID = event.usageID { item["usage_id"] = usageID }
            return item
        }
        let body: [String: Any] = ["sent_at": Self.iso(now), "items": items]
        return try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    struct Result {
        var status: String
        var reason: String?
        var message: String?
        /// Seconds, for a `retry`.
        var retryAfter: Double?
    }

    /// Results by item id and the LMS's clock offset; nil when the body is not the endpoint's
    /// answer. Results for ids this batch did not carry, and repeats, are left out.
    func results(in body: Data) -> (results: [String: Result], clockOffset: Double?)? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let list = object["results"] as? [Any] else {
            return nil
        }
        let sent = Set(events.map { SubmissionBatch.itemID(for: $0.id) })
        var found: [String: Result] = [:]
        for case let item as [String: Any] in list {
            guard let id = item["id"] as? String, sent.contains(id), found[id] == nil, let status = item["status"] as? String else { continue }
            let retryAfter = (item["retry_after"] as? NSNumber).map(\.doubleValue).flatMap { $0.isFinite ? min(max($0, 0), 86_400) : nil }
            found[id] = Result(
                status: RemoteText.clean(status, limit: 32), reason: (item["reason"] as? String).map { RemoteText.clean($0, limit: 64) },
                message: (item["message"] as? String).map { RemoteText.clean($0, limit: 1000) }, retryAfter: retryAfter)
        }
        let offset = (object["clock_offset_seconds"] as? NSNumber).map(\.doubleValue).flatMap { $0.isFinite ? $0 : nil }
        return (found, offset)
    }
}
