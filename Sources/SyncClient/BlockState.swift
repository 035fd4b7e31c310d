import Foundation
import SafeText

/// What a problem's offline page shows of the learner's latest answer to it: the answer itself,
/// and either "waiting to be sent", the LMS's grade with its cleaned feedback, or why it was not
/// graded, in words a learner reads. Made from the outbox, which keeps every answer and result;
/// the page only chooses whether to show this state or the blank problem (its reset).
public struct BlockState: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// Kept on the device, not answered by the LMS yet.
        case waiting
        /// Graded: `correctness`, the score and the feedback when the LMS gave them.
        case graded
        /// Taken by the LMS without a grade (queued for a grader, held for the course team).
        case accepted
        /// Refused by the LMS for good (past due, no attempts left, …), never sent again.
        case refused
        /// Held on the device: the problem changed (or left the course) after it was answered.
        case conflict
    }

    public var usageID: String
    /// The outbox id of the answer shown: a reset on the page is remembered against it, so a
    /// newer answer or result is shown again.
    public var answerID: String
    public var kind: Kind
    public var timestamp: String
    /// The learner's answer, by CAPA field name, to fill the form with.
    public var fields: [String: [String]]
    /// `correct`, `incorrect` or `partially-correct`.
    public var correctness: String?
    public var earned: Double?
    public var possible: Double?
    public var attemptsUsed: Int?
    /// The LMS's feedback, cleaned by `FeedbackHTML.clean` here again (an outbox written by an
    /// older version, or by another program, may hold it uncleaned).
    public var feedbackHTML: String?
    /// The refusal's code (`past_due`, `content_changed`, …) when the LMS gave one.
    public var reason: String?
    /// A sentence for the learner: what happened to the answer and what to do. Plain text.
    public var message: String?

    enum CodingKeys: String, CodingKey {
        case kind = "state"
        case usageID = "usage_id"
        case answerID = "answer_id"
        case timestamp, fields, correctness, earned, possible, reason, message
        case attemptsUsed = "attempts_used"
        case feedbackHTML = "feedback_html"
    }

    /// The state of each block that has answers in `entries` (in the outbox's timestamp order):
    /// its latest answer's.
    public static func latest(in entries: [AnswerEntry]) -> [String: BlockState] {
        var states: [String: BlockState] = [:]
        for entry in Outbox.inTimeOrder(entries) { states[entry.usageID] = BlockState(entry) }
        return states
    }

    public init(_ entry: AnswerEntry) {
        usageID = entry.usageID
        answerID = entry.id
        timestamp = entry.timestamp
        fields = entry.fields
        switch entry.state {
        case .pending, .sending:
            kind = .waiting
            message = "Waiting to be sent: your answer reaches the course the next time this device syncs online."
        case .conflict:
            kind = .conflict
            message = entry.message == "the block is no longer in the course"
                ? "Not sent: this problem is no longer in the course."
                : "Not sent: the problem changed after you answered it. Sync to get the new version, then answer again."
        case .rejected:
            kind = .refused
            reason = entry.lmsResult?.reason
            message = Self.refusalMessage(reason: reason, lmsMessage: Self.lmsWords(entry))
        case .sent:
            kind = .accepted
            takeResult(of: entry)
        }
    }

    /// A sent answer's result: the batch endpoint's, else what `problem_check` answered.
    private mutating func takeResult(of entry: AnswerEntry) {
        if let result = entry.lmsResult {
            correctness = result.correctness.map { RemoteText.clean($0, limit: 64) }
            earned = result.earned
            possible = result.possible
            attemptsUsed = result.attemptsUsed
            feedbackHTML = result.feedbackHTML.map { FeedbackHTML.clean($0) }
            if result.status == "graded" {
                kind = .graded
            } else {
                message = result.reason == "late_sync"
                    ? "Sent after the due date: the course team decides whether it counts."
                    : "Sent: the course has your answer; it has not been graded yet."
            }
            return
        }
        guard let text = entry.result, let grade = try? JSONDecoder().decode(AnswerSender.Grade.self, from: Data(text.utf8)) else {
            message = "Sent: the course has your answer."
            return
        }
        earned = grade.currentScore
        possible = grade.totalPossible
        if let success = grade.success, Self.grades.contains(success) {
            kind = .graded
            correctness = success
        } else {
            message = "Sent: the course has your answer; it has not been graded yet."
        }
    }

    static let grades: Set<String> = ["correct", "incorrect", "partially-correct"]

    /// The LMS's own words kept with a refused answer, without the reason code the batch client
    /// puts before them (`past_due: …`).
    static func lmsWords(_ entry: AnswerEntry) -> String? {
        guard var text = entry.message.map({ RemoteText.clean($0, limit: 500) }), !text.isEmpty else { return nil }
        if let reason = entry.lmsResult?.reason, text.hasPrefix(reason + ": ") { text = String(text.dropFirst(reason.count + 2)) }
        if let reason = entry.lmsResult?.reason, text == reason { return nil }
        return text.isEmpty ? nil : text
    }

    /// What a refusal means for the learner, by the plugin's reason codes
    /// (docs/offline-sync-api.md); an unknown one shows the LMS's words.
    static func refusalMessage(reason: String?, lmsMessage: String?) -> String {
        switch reason {
        case "past_due": return "Not graded: your answer reached the course after the due date."
        case "content_changed": return "Not graded: the problem changed after it was downloaded. Sync to get the new version, then answer again."
        case "no_attempts_left": return "Not graded: you had no attempts left on this problem."
        case "answered_online_later": return "Not graded: you answered this problem online later, and that answer counts."
        default:
            return "Not accepted by the course" + (lmsMessage.map { ": " + $0 } ?? ".")
        }
    }
}

extension BlockState {
    /// `value` as JSON that is safe inside an HTML `<script>` element and as JavaScript source:
    /// `<`, `>` and `&` (so no `</script>` or `<!--` can end or change the element) and U+2028,
    /// U+2029 (line breaks to older JavaScript) are written as `\u` escapes, which only occur
    /// inside strings in JSON, so the value read is the same.
    public static func scriptJSON<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            switch scalar {
            case "<": out += "\\u003c"
            case ">": out += "\\u003e"
            case "&": out += "\\u0026"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `{usage_id, state}` as `scriptJSON` writes it: what serve's state endpoint answers and a
    /// state file holds; `state` is null for a block with no answer.
    public static func json(usageID: String, state: BlockState?) -> String {
        scriptJSON(Record(usageID: usageID, state: state))
    }

    /// The state file a page loads by `<script src>` (from `file://`, where it cannot fetch):
    /// it adds `{usage_id, state}` to `window.coursepackStates`.
    public static func script(usageID: String, state: BlockState?) -> [UInt8] {
        Array("(window.coursepackStates = window.coursepackStates || []).push(\(json(usageID: usageID, state: state)));\n".utf8)
    }

    struct Record: Encodable {
        var usageID: String
        var state: BlockState?

        enum CodingKeys: String, CodingKey {
            case usageID = "usage_id"
            case state
        }

        /// `state` written as null, not left out, so a page tells "no answer" from an old file.
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(usageID, forKey: .usageID)
            try container.encode(state, forKey: .state)
        }
    }
}
