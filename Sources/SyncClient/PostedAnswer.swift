import Foundation
import Manifest

/// The answer a page hands its host (the iOS or Android bridge, `coursepack serve`, or a
/// `localStorage` export): `{usage_id, timestamp, fields[, content_hash, id]}`.
public enum PostedAnswer {
    struct Body: Decodable {
        var usageID: String
        var timestamp: String
        var fields: [String: FieldValue]
        var contentHash: String?
        var id: String?

        enum CodingKeys: String, CodingKey {
            case timestamp, fields, id
            case usageID = "usage_id"
            case contentHash = "content_hash"
        }
    }

    /// A field is one value (text, radio, select) or several (checkboxes).
    enum FieldValue: Decodable {
        case one(String)
        case many([String])

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) { self = .one(text) } else { self = .many(try container.decode([String].self)) }
        }

        var values: [String] {
            switch self {
            case .one(let text): return [text]
            case .many(let list): return list
            }
        }
    }

    /// Bounds on what one posted answer may hold, checked before it is kept: CAPA forms have a
    /// handful of inputs with short values, and every byte kept is read again by every later
    /// outbox read.
    public struct Limits: Sendable, Equatable {
        public var fields = 100
        public var valuesPerField = 100
        public var valueLength = 10_000
        public var nameLength = 256
        public var idLength = 1_000

        public init() {}
        public static let standard = Limits()
    }

    /// The outbox entry for a posted answer. A page cannot know its own content hash, so the host
    /// stamps the installed block's: the version the learner answered. With `keepingID` false
    /// (`coursepack serve`), an id the body gives is ignored and the host makes its own, so no
    /// page can pick one that collides with another answer's.
    public static func entry(
        from data: Data, installed: CourseManifest, keepingID: Bool = true, limits: Limits = .standard
    ) throws(OutboxError) -> AnswerEntry {
        try entry(from: data, keepingID: keepingID, limits: limits) { usageID in
            installed.blocks.first { $0.usageID == usageID }.map {
                Listed(contentHash: $0.contentHash, refusal: $0.isOffline ? nil : Listed.onlineOnly(reason: $0.reason.flatMap { $0.isEmpty ? nil : $0 }))
            }
        }
    }

    /// A block the installed course lists, as an answer needs it.
    public struct Listed: Sendable {
        public var contentHash: String?
        /// Why no page of this device can have posted an answer to the block (nil: one can): an
        /// online-only block has no page here, and an offline one whose folder is gone (evicted,
        /// or never installed under a budget) has none either. Its answers go to the LMS from
        /// the LMS's own page, never through this device's outbox.
        public var refusal: String?

        public init(contentHash: String?, refusal: String?) {
            (self.contentHash, self.refusal) = (contentHash, refusal)
        }

        public static func onlineOnly(reason: String?) -> String {
            "is online only here" + (reason.map { " (\($0))" } ?? "") + ": it has no offline page to answer it"
        }

        public static let notInstalled = "is listed but not installed here: no offline page of it is on this device"
    }

    /// `entry(from:installed:)` with the installed course's block looked up by `listed` (nil:
    /// the course does not list it), for a caller that finds one block without the manifest.
    public static func entry(
        from data: Data, keepingID: Bool = true, limits: Limits = .standard, listed: (String) -> Listed?
    ) throws(OutboxError) -> AnswerEntry {
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: data)
        } catch {
            throw .invalidAnswer("not an answer object {usage_id, timestamp, fields}: \(error)")
        }
        try check(body, limits: limits)
        guard let block = listed(body.usageID) else {
            throw .invalidAnswer("block \(body.usageID) is not installed here")
        }
        if let refusal = block.refusal {
            throw .invalidAnswer("block \(body.usageID) \(refusal)")
        }
        let given = keepingID ? body.id : nil
        let id = given ?? "\(body.timestamp)-\(body.usageID.split(separator: "@").last ?? "")-\(randomHex())"
        return AnswerEntry(
            id: id, usageID: body.usageID, contentHash: body.contentHash ?? block.contentHash, timestamp: body.timestamp,
            fields: body.fields.mapValues(\.values))
    }

    static func check(_ body: Body, limits: Limits) throws(OutboxError) {
        for (what, text) in [("usage_id", body.usageID), ("timestamp", body.timestamp), ("id", body.id ?? ""), ("content_hash", body.contentHash ?? "")]
        where text.utf8.count > limits.idLength {
            throw .invalidAnswer("\(what) is \(text.utf8.count) bytes long, over the limit of \(limits.idLength)")
        }
        guard body.fields.count <= limits.fields else {
            throw .invalidAnswer("\(body.fields.count) fields, over the limit of \(limits.fields)")
        }
        for (name, value) in body.fields {
            guard name.utf8.count <= limits.nameLength else {
                throw .invalidAnswer("a field name is \(name.utf8.count) bytes long, over the limit of \(limits.nameLength)")
            }
            let values = value.values
            guard values.count <= limits.valuesPerField else {
                throw .invalidAnswer("field \(name) has \(values.count) values, over the limit of \(limits.valuesPerField)")
            }
            if let long = values.first(where: { $0.utf8.count > limits.valueLength }) {
                throw .invalidAnswer("a value of field \(name) is \(long.utf8.count) bytes long, over the limit of \(limits.valueLength)")
            }
        }
    }

    /// 64 random bits: two answers posted in the same millisecond to the same block stay two.
    public static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
