import Foundation

/// What the LMS's submissions endpoint said of one answer, as kept with it in the outbox. Every
/// field is optional: outboxes written before the endpoint existed read as they were.
public struct LMSResult: Codable, Sendable, Equatable {
    /// `graded`, `accepted`, `refused` or `retry`.
    public var status: String
    /// Why it was refused (`past_due`, `content_changed`, …) or held (`late_sync`).
    public var reason: String?
    /// `correct`, `incorrect` or `partially-correct`.
    public var correctness: String?
    public var earned: Double?
    public var possible: Double?
    public var attemptsUsed: Int?
    /// The problem's HTML after grading, cleaned by `FeedbackHTML.clean` before it was kept.
    public var feedbackHTML: String?

    public init(status: String) {
        self.status = status
    }

    /// One line for a listing: `graded: correct, 1/1 points, 2 attempts used`.
    public var summary: String {
        func number(_ value: Double) -> String { value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value) }
        var parts: [String] = []
        if let correctness { parts.append(correctness) }
        if let reason { parts.append(reason) }
        if let earned, let possible { parts.append("\(number(earned))/\(number(possible)) points") }
        if let attemptsUsed { parts.append("\(attemptsUsed) attempts used") }
        return parts.isEmpty ? status : "\(status): " + parts.joined(separator: ", ")
    }

    enum CodingKeys: String, CodingKey {
        case status, reason, correctness, earned, possible
        case attemptsUsed = "attempts_used"
        case feedbackHTML = "feedback_html"
    }
}
