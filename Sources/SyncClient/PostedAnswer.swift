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

    /// The outbox entry for a posted answer. A page cannot know its own content hash, so the host
    /// stamps the installed block's: the version the learner answered.
    public static func entry(from data: Data, installed: CourseManifest) throws(OutboxError) -> AnswerEntry {
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: data)
        } catch {
            throw .invalidAnswer("not an answer object {usage_id, timestamp, fields}: \(error)")
        }
        guard let block = installed.blocks.first(where: { $0.usageID == body.usageID }) else {
            throw .invalidAnswer("block \(body.usageID) is not installed here")
        }
        let id = body.id ?? "\(body.timestamp)-\(body.usageID.split(separator: "@").last ?? "")-\(UInt32.random(in: 0...UInt32.max))"
        return AnswerEntry(
            id: id, usageID: body.usageID, contentHash: body.contentHash ?? block.contentHash, timestamp: body.timestamp,
            fields: body.fields.mapValues(\.values))
    }
}
