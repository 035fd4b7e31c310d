import Foundation
import Testing
import TestSupport

/// Issue 32: once an answer has a result, the problem's offline page shows it. The device keeps
/// each problem's latest state in `.coursepack-sync/state/<type>/<name>.js` (for `file://`) and
/// serve gives it to its own pages; both come from the outbox, with the LMS's feedback cleaned
/// and escaped for a script.
@Suite(.serialized) struct AnswerStateTests {
    let base = OutboxTests()
    static let quiz = OutboxTests.quiz
    static let radio = "input_offline_quiz_2_1"
    static let prefix = "(window.coursepackStates = window.coursepackStates || []).push("

    static func stateFile(_ target: String) -> String {
        target + "/CoursepackX+CP101+2026/.coursepack-sync/state/problem/offline_quiz.js"
    }

    /// The state file's text and the `state` it gives the page (nil for none), read back by
    /// Python's JSON parser.
    func state(_ target: String) throws -> (text: String, state: [String: Any]?) {
        let text = String(decoding: TestSupport.read(Self.stateFile(target)), as: UTF8.self)
        try #require(text.hasPrefix(Self.prefix) && text.hasSuffix(");\n"), "not a state file: \(text)")
        let json = String(text.dropFirst(Self.prefix.count).dropLast(3))
        let read = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", "import json,sys; print(json.dumps(json.loads(sys.argv[1])))", json])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: Any])
        #expect(record["usage_id"] as? String == Self.quiz)
        return (text, record["state"] as? [String: Any])
    }

    func setUp(batch: [String: Any]?, faults: [String: Any] = [:]) throws -> (published: String, target: String, token: String, lms: OutboxTests.LMS) {
        let (course, published, target, token) = try base.device()
        let lms = try base.startLMS(course: course)
        var all = faults
        if let batch { all["batch"] = batch }
        try lms.fail(all)
        return (published, target, token, lms)
    }

    @Test func everyInstalledProblemHasAStateFileAndTheDeviceStaysWhole() throws {
        let (_, published, target, _) = try base.device()
        #expect(try state(target).state == nil, "no answer yet: the page shows the blank problem")
        #expect(try base.answer(target, at: "2026-11-23T09:00:01.000Z", fields: [Self.radio: "choice_1"]).status == 0)
        let waiting = try #require(try state(target).state)
        #expect(waiting["state"] as? String == "waiting" && (waiting["message"] as? String)?.hasPrefix("Waiting to be sent") == true)
        #expect(waiting["fields"] as? [String: [String]] == [Self.radio: ["choice_1"]])
        // Not a foreign file to the device: status finds nothing wrong, a sync repairs nothing.
        let status = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(status.status == 0 && !status.stdout.contains("damaged") && !status.stdout.contains("leftover"), "\(status.stdout)")
        // A state file of a block not installed (removed since, or never) goes with the next sync.
        let states = target + "/CoursepackX+CP101+2026/.coursepack-sync/state"
        try TestSupport.write(["html/gone.js": "x", "problem/removed_block.js": "y"], under: states)
        let again = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(TestSupport.files(under: states) == ["problem/offline_quiz.js"])
        #expect(again.status == 0 && !again.stdout.contains("repaired") && !again.stderr.contains("repaired"), "\(again.stdout)\(again.stderr)")
        #expect(try state(target).state?["state"] as? String == "waiting")
    }

    /// The LMS's feedback reaches the page's state only cleaned, and escaped for a script: no
    /// script, handler, style sheet, SVG animation or `javascript:` URL, no `</script>`.
    @Test func gradedFeedbackReachesTheStateCleanedAndEscaped() throws {
        let hostile = #"<p class="fb" onmouseover="alert(1)">Right: 1 < 2 "#
            + "\u{2028}</p><script>alert(2)</script></script><style>form{display:none}</style>"
            + #"<svg><a><animate attributeName="href" values="javascript:alert(3)"/><text>x</text></a></svg>"#
            + #"<a href="javascript:alert(4)">more</a><img src=x onerror=alert(5)>"#
        let graded: [String: Any] = ["status": "graded", "correctness": "correct", "score": ["earned": 1, "possible": 1], "attempts_used": 1, "feedback_html": hostile]
        let (published, target, token, lms) = try setUp(batch: ["items": [Self.quiz: [graded]]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try base.answer(target, at: "2026-11-23T09:00:01.000Z", fields: [Self.radio: "choice_1"]).status == 0)
        let result = try base.submit(published, target, lms, token: token)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let (text, shown) = try state(target)
        let state = try #require(shown)
        #expect(state["state"] as? String == "graded" && state["correctness"] as? String == "correct")
        #expect((state["earned"] as? NSNumber)?.doubleValue == 1 && (state["possible"] as? NSNumber)?.doubleValue == 1)
        #expect(state["feedback_html"] as? String == "<p class=\"fb\">Right: 1 &lt; 2 \u{2028}</p><svg><a><text>x</text></a></svg><a>more</a><img src=\"x\">")
        #expect(!text.contains("<") && !text.contains(">") && !text.unicodeScalars.contains("\u{2028}"), "\(text)")
        #expect(!text.contains("alert") && !text.lowercased().contains("javascript"), "\(text)")
    }

    /// A refusal is shown in the learner's words and never sent again.
    @Test func aRefusalIsShownAndNotResent() throws {
        let refused: [String: Any] = ["status": "refused", "reason": "past_due", "message": "answered after the due date"]
        let (published, target, token, lms) = try setUp(batch: ["items": [Self.quiz: [refused]]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try base.answer(target, at: "2026-11-23T09:00:01.000Z", fields: [Self.radio: "choice_0"]).status == 0)
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(lms.requests().compactMap { $0["batch"] }.count == 1, "sent once, never again")
        let state = try #require(try state(target).state)
        #expect(state["state"] as? String == "refused" && state["reason"] as? String == "past_due")
        #expect(state["message"] as? String == "Not graded: your answer reached the course after the due date.")
    }

    /// A 5xx keeps the answer waiting; the next submit sends it once and the page shows the grade.
    /// Through problem_check (no plugin), an HTTP 200 refusal is shown as the LMS's words.
    @Test func aServerErrorThenSuccessSendsOnceAndAProblemCheckRefusalIsShown() throws {
        let (published, target, token, lms) = try setUp(batch: nil, faults: [Self.quiz: [500]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try base.answer(target, at: "2026-11-23T09:00:01.000Z", fields: [Self.radio: "choice_1"]).status == 0)
        #expect(try base.submit(published, target, lms, token: token).status == 1)
        #expect(try state(target).state?["state"] as? String == "waiting")
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(lms.requests().filter { $0["usage_id"] as? String == Self.quiz }.count == 2, "the failed try and the one that was graded")
        let graded = try #require(try state(target).state)
        #expect(graded["state"] as? String == "graded" && graded["correctness"] as? String == "correct")

        let closed = "The state of this problem has changed since you loaded this page. Please refresh your page."
        try lms.fail([Self.quiz: [["status": 200, "success": closed]]])
        #expect(try base.answer(target, at: "2026-11-23T09:00:05.000Z", fields: [Self.radio: "choice_0"]).status == 0)
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        let refused = try #require(try state(target).state)
        #expect(refused["state"] as? String == "refused" && refused["message"] as? String == "Not accepted by the course: " + closed)
        #expect(refused["fields"] as? [String: [String]] == [Self.radio: ["choice_0"]])
    }

    /// Serve gives a page its block's state with the run's secret only, and never serves the
    /// state files themselves (another site could load them with a script element).
    @Test func serveGivesTheStateToItsOwnPagesOnly() throws {
        let target = try ServeTests.syncedExample()
        #expect(try base.answer(target, at: "2026-11-23T09:00:01.000Z", fields: [Self.radio: "choice_1"]).status == 0)
        let (server, address, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        var own = try ServeTests.pageHeaders(address)
        own["Content-Type"] = nil
        own["Origin"] = nil
        let path = "/_coursepack/state?usage_id=" + (Self.quiz.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        var other = own
        other["X-Coursepack-Secret"] = nil
        var crossSite = own
        crossSite["Sec-Fetch-Site"] = "cross-site"
        let got = try ServeTests.get(address, [
            ["name": "own", "path": path, "headers": own],
            ["name": "no secret", "path": path, "headers": other],
            ["name": "cross-site", "path": path, "headers": crossSite],
            ["name": "unknown block", "path": "/_coursepack/state?usage_id=block-v1:x", "headers": own],
            ["name": "no block", "path": "/_coursepack/state", "headers": own],
            ["name": "the file", "path": "/CoursepackX+CP101+2026/.coursepack-sync/state/problem/offline_quiz.js"],
            ["name": "the file, LMS shape", "path": "/courses/course-v1:CoursepackX+CP101+2026/.coursepack-sync/state/problem/offline_quiz.js"],
        ])
        let answer = try #require(got["own"])
        #expect(answer.status == 200 && answer.cache == "no-store", "\(answer.status) \(answer.text)")
        let record = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        #expect((record["state"] as? [String: Any])?["state"] as? String == "waiting")
        #expect(got["no secret"]?.status == 403 && got["cross-site"]?.status == 403)
        #expect(got["unknown block"]?.status == 404 && got["no block"]?.status == 400)
        #expect(got["the file"]?.status == 403 && got["the file, LMS shape"].map { [403, 404].contains($0.status) } == true)
        #expect(got.values.allSatisfy { $0.status == 200 || !$0.text.contains("choice_1") }, "no answer leaks in a refusal")

        // An answer posted to serve is the page's new state at once, for file:// too.
        var post = try ServeTests.pageHeaders(address)
        post["Content-Type"] = "application/json"
        let body = #"{"usage_id": "\#(Self.quiz)", "timestamp": "2026-11-23T09:00:09.000Z", "fields": {"\#(Self.radio)": "choice_0"}}"#
        let posted = try ServeTests.get(address, [["name": "post", "path": "/_coursepack/answers", "method": "POST", "body": body, "headers": post]])
        #expect(posted["post"]?.status == 201)
        #expect(try state(target).state?["fields"] as? [String: [String]] == [Self.radio: ["choice_0"]])
    }
}
