import Foundation
import Testing

@testable import SyncClient

/// What a problem's page is told of its latest answer, and how it is written into a script.
struct BlockStateTests {
    static let quiz = "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"

    func entry(_ state: AnswerEntry.State, at second: Int = 1, result: LMSResult? = nil, message: String? = nil) -> AnswerEntry {
        var entry = AnswerEntry(
            id: "a\(second)", usageID: Self.quiz, contentHash: nil, timestamp: String(format: "2026-11-23T09:00:%02d.000Z", second),
            fields: ["input_offline_quiz_2_1": ["choice_1"]])
        entry.state = state
        entry.lmsResult = result
        entry.message = message
        return entry
    }

    /// Text that would end the script element, open a comment, or break a line in older
    /// JavaScript is written as `\u` escapes, and reads back as it was.
    @Test func scriptJSONCannotEndTheScriptOrBreakALine() throws {
        let hostile = "</script><script>alert(1)</script><!-- a & b \u{2028}\u{2029} </SCRIPT >"
        let json = BlockState.scriptJSON(["text": hostile])
        #expect(!json.contains("<") && !json.contains(">") && !json.contains("&"))
        #expect(!json.unicodeScalars.contains("\u{2028}") && !json.unicodeScalars.contains("\u{2029}"))
        let read = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        #expect(read == ["text": hostile])
    }

    @Test func theLatestAnswerDecidesWhatThePageShows() {
        var graded = LMSResult(status: "graded")
        graded.correctness = "correct"
        graded.earned = 1
        graded.possible = 1
        graded.feedbackHTML = #"<p onclick="x()">Right<script>alert(1)</script></p>"#
        let states = BlockState.latest(in: [entry(.pending, at: 1), entry(.sent, at: 3, result: graded), entry(.rejected, at: 2)])
        let shown = states[Self.quiz]
        #expect(shown?.kind == .graded && shown?.answerID == "a3" && shown?.correctness == "correct" && shown?.earned == 1)
        // Cleaned again when shown: an outbox another program wrote may hold it uncleaned.
        #expect(shown?.feedbackHTML == "<p>Right</p>")
        #expect(BlockState.latest(in: [entry(.sent, at: 1, result: graded), entry(.pending, at: 2)])[Self.quiz]?.kind == .waiting)
    }

    /// A refusal is told in the learner's words by its reason; an unknown one shows the LMS's.
    @Test func refusalsAreToldByTheirReason() {
        var pastDue = LMSResult(status: "refused")
        pastDue.reason = "past_due"
        let late = BlockState(entry(.rejected, result: pastDue, message: "past_due: answered after the due date"))
        #expect(late.kind == .refused && late.reason == "past_due" && late.message?.contains("after the due date") == true)
        var other = LMSResult(status: "refused")
        other.reason = "lms_refused"
        let closed = BlockState(entry(.rejected, result: other, message: "lms_refused: The problem is closed."))
        #expect(closed.message == "Not accepted by the course: The problem is closed.")
        // problem_check's refusal with HTTP 200 keeps only the LMS's message.
        let plain = BlockState(entry(.rejected, message: "The state of this problem has changed since you loaded this page."))
        #expect(plain.message == "Not accepted by the course: The state of this problem has changed since you loaded this page.")
        #expect(BlockState(entry(.conflict, message: "the problem changed since this answer was given; it was not sent")).kind == .conflict)
    }

    /// problem_check's answer, kept as `result`, is shown as a grade too.
    @Test func aProblemCheckGradeIsShown() {
        var sent = entry(.sent)
        sent.result = #"{"current_score":0,"success":"incorrect","total_possible":1}"#
        let state = BlockState(sent)
        #expect(state.kind == .graded && state.correctness == "incorrect" && state.earned == 0 && state.possible == 1)
        sent.result = #"{"success":"submitted"}"#
        #expect(BlockState(sent).kind == .accepted)
    }
}
