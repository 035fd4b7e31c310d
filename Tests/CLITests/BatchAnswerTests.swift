import Foundation
import Testing
import TestSupport

/// Answers reach an LMS with the Open edX plugin through its submissions endpoint, in batches,
/// each answer settled by its own result; an LMS without it gets them through problem_check.
@Suite(.serialized) struct BatchAnswerTests {
    let base = OutboxTests()
    static let quiz = OutboxTests.quiz
    static let radio = "input_offline_quiz_2_1"

    func entries(_ target: String) throws -> [[String: Any]] {
        let listed = try TestSupport.coursepack(["answers", target, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
    }

    func batches(_ lms: OutboxTests.LMS) -> [[String]] {
        lms.requests().compactMap { $0["batch"] as? [String] }
    }

    func problemChecks(_ lms: OutboxTests.LMS) -> Int {
        lms.requests().filter { $0["batch"] == nil }.count
    }

    /// A device with answers at the given seconds past 09:00 (choice_1 is right), and an LMS with
    /// the plugin scripted by `batch`.
    func setUp(answersAt seconds: [Int], batch: [String: Any]) throws -> (published: String, target: String, token: String, lms: OutboxTests.LMS) {
        let (course, published, target, token) = try base.device()
        let lms = try base.startLMS(course: course)
        try lms.fail(["batch": batch])
        for second in seconds {
            let time = String(format: "2026-11-23T09:00:%02d.000Z", second)
            #expect(try base.answer(target, at: time, fields: [Self.radio: second % 2 == 1 ? "choice_1" : "choice_0"]).status == 0)
        }
        return (published, target, token, lms)
    }

    @Test func gradedResultsAreStoredAndShownInTimestampOrder() throws {
        let (published, target, token, lms) = try setUp(answersAt: [2, 1], batch: [:])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let result = try base.submit(published, target, lms, token: token)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("answers: 2 sent, 0 held (the block changed), 0 rejected, 0 kept for later"))
        let listed = try entries(target)
        #expect(batches(lms) == [listed.compactMap { $0["id"] as? String }], "one batch, oldest first")
        #expect(problemChecks(lms) == 0)
        let items = try #require(lms.requests().first?["items"] as? [[String: Any]])
        #expect(items.allSatisfy { ($0["version"] as? String)?.isEmpty == false && $0["answers"] as? [String: String] != nil })
        #expect(items.map { $0["timestamp"] as? String } == ["2026-11-23T09:00:01.000Z", "2026-11-23T09:00:02.000Z"])
        let results = listed.compactMap { $0["lms_result"] as? [String: Any] }
        #expect(results.map { $0["correctness"] as? String } == ["correct", "incorrect"])
        #expect((results.first?["earned"] as? NSNumber)?.doubleValue == 1 && results.first?["feedback_html"] as? String == #"<div class="problem">graded</div>"#)
        let text = try TestSupport.coursepack(["answers", target]).stdout
        #expect(text.contains("[graded: correct, 1/1 points, 1 attempts used]"), "\(text)")
    }

    @Test func aRefusalIsNeverResentAndARetryIsSentAgainUnderTheSameID() throws {
        let refused: [String: Any] = ["status": "refused", "reason": "past_due", "message": "answered after the due date"]
        let (published, target, token, lms) = try setUp(answersAt: [1, 3], batch: ["items": [Self.quiz: [refused, ["status": "retry"]]]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let first = try base.submit(published, target, lms, token: token)
        #expect(first.stdout.contains("answers: 0 sent, 0 held (the block changed), 1 rejected, 1 kept for later"), "\(first.stdout)")
        #expect(try entries(target).map { $0["state"] as? String } == ["rejected", "pending"])
        #expect(try entries(target).first?["message"] as? String == "past_due: answered after the due date")
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(try base.submit(published, target, lms, token: token).stdout.contains("answers: 0 sent"))
        let sent = batches(lms)
        #expect(sent.count == 2 && sent.last?.count == 1 && sent.last?.first == sent.first?.last, "\(sent)")
        #expect(try entries(target).map { $0["state"] as? String } == ["rejected", "sent"])
    }

    @Test func anLMSWithoutThePluginGetsTheAnswersThroughProblemCheck() throws {
        let (published, target, token, lms) = try setUp(answersAt: [1, 2], batch: ["requests": [404]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let result = try base.submit(published, target, lms, token: token)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(batches(lms).count == 1 && problemChecks(lms) == 2)
        #expect(try entries(target).map { $0["state"] as? String } == ["sent", "sent"])
    }

    @Test func aBatchTooLargeIsSplitInHalves() throws {
        let (published, target, token, lms) = try setUp(answersAt: [1, 2, 3], batch: ["max_items": 1])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        let ids = try entries(target).compactMap { $0["id"] as? String }
        #expect(batches(lms) == [ids, [ids[0]], [ids[1]], [ids[2]]])
        #expect(try entries(target).map { $0["state"] as? String } == ["sent", "sent", "sent"])
    }

    @Test func aServerErrorKeepsTheBatchForTheNextRun() throws {
        let (published, target, token, lms) = try setUp(answersAt: [1, 2], batch: ["requests": [503]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let first = try base.submit(published, target, lms, token: token)
        #expect(first.status == 1 && first.stdout.contains("0 sent, 0 held (the block changed), 0 rejected, 2 kept for later"), "\(first.stdout)")
        #expect(try entries(target).map { $0["state"] as? String } == ["pending", "pending"])
        #expect(problemChecks(lms) == 0)
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(batches(lms).count == 2 && batches(lms).first == batches(lms).last)
        #expect(try entries(target).map { $0["state"] as? String } == ["sent", "sent"])
    }

    @Test func hostileFeedbackIsCleanedBeforeItIsKept() throws {
        let html = #"<div onclick="x()" style="color:red">ok<script>alert(1)</script><img src="p.png" alt='>' onerror=alert(2)>"#
            + #"<a href=" jav&#x61;script:alert(3)">l</a><iframe src="//evil"></iframe><form action="//evil"><input name="a"></form>"#
            + #"<SCRIPT>no end"#
        let graded: [String: Any] = ["status": "graded", "correctness": "correct", "feedback_html": html]
        let (published, target, token, lms) = try setUp(answersAt: [1], batch: ["items": [Self.quiz: [graded]]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        let kept = try #require((try entries(target).first?["lms_result"] as? [String: Any])?["feedback_html"] as? String)
        #expect(kept == #"<div style="color:red">ok<img src="p.png" alt=">"><a>l</a><input name="a">"#, "\(kept)")
    }

    @Test func resultsForUnknownIDsAreIgnoredAndAMissingResultKeepsTheAnswer() throws {
        let stranger: [String: Any] = ["id": "never-sent", "status": "refused", "reason": "invalid"]
        let (published, target, token, lms) = try setUp(answersAt: [1, 3], batch: ["items": [Self.quiz: [["omit": true]]], "extra": [stranger]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let first = try base.submit(published, target, lms, token: token)
        #expect(first.stdout.contains("answers: 1 sent, 0 held (the block changed), 0 rejected, 1 kept for later"), "\(first.stdout)")
        #expect(try entries(target).map { $0["state"] as? String } == ["pending", "sent"])
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(try entries(target).map { $0["state"] as? String } == ["sent", "sent"])
        #expect(batches(lms).last?.count == 1)
        #expect(!(try TestSupport.coursepack(["answers", target, "--json"]).stdout.contains("never-sent")))
    }

    /// Feedback an LMS (or what sits in front of it) could send, and what of it is kept.
    @Test(arguments: [
        (#"<p>a<!-- <script>alert(1)</script> -->b</p>"#, "<p>ab</p>"),
        (#"<svg><a xlink:href="JaVaScRiPt&colon;alert(1)">x</a></svg>"#, "<svg><a>x</a></svg>"),
        (#"<img src=x onerror=alert(1)//><a href="data:text/html,<script>x</script>">d</a>"#, #"<img src="x"><a>d</a>"#),
        (#"<img src="data:image/png;base64,AA"><b>1 < 2</b>"#, #"<img src="data:image/png;base64,AA"><b>1 &lt; 2</b>"#),
        (#"<object data="x.swf"><embed src="x"></object><scr<script>x</script>ipt>"#, "xipt>"),
        // A style sheet restyles the whole page; an SVG animation sets href after any check.
        (#"<style>form{display:none}</style><svg><a><animate attributeName="href" values="javascript:alert(1)"/>x</a></svg>"#, "<svg><a>x</a></svg>"),
    ])
    func feedbackIsCleaned(hostile: String, kept: String) throws {
        let graded: [String: Any] = ["status": "graded", "feedback_html": hostile]
        let (published, target, token, lms) = try setUp(answersAt: [1], batch: ["items": [Self.quiz: [graded]]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        let stored = (try entries(target).first?["lms_result"] as? [String: Any])?["feedback_html"] as? String
        #expect(stored == kept)
    }

    /// A refusal of the whole request decides nothing: every answer is kept, a 400 too (a
    /// malformed batch is the client's bug and must not cost the learner's answers).
    @Test(arguments: [400, 401, 409])
    func aRefusedBatchKeepsEveryAnswer(status: Int) throws {
        let (published, target, token, lms) = try setUp(answersAt: [1, 2], batch: ["requests": [status]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let first = try base.submit(published, target, lms, token: token)
        #expect(first.status != 0 && first.stdout.contains("2 kept for later"), "\(first.stdout)\(first.stderr)")
        #expect(try entries(target).map { $0["state"] as? String } == ["pending", "pending"])
        #expect(batches(lms).count == 1 && problemChecks(lms) == 0)
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(try entries(target).map { $0["state"] as? String } == ["sent", "sent"])
    }
}
