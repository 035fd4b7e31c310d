import Foundation
import Testing
import TestSupport

/// Answers given offline reach the LMS's problem_check: in timestamp order per block, with CAPA's
/// field names (checked by a fake LMS that derives them from the OLX on its own), kept on
/// failure, held when the block changed, never lost to a killed client.
@Suite(.serialized) struct OutboxTests {
    static let token = "offline-token-1"
    static let quiz = "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"

    struct LMS {
        let url: String
        let log: String
        let faults: String
        let process: ChildProcess

        func requests() -> [[String: Any]] {
            String(decoding: TestSupport.read(log), as: UTF8.self).split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        func fail(_ faults: [String: Any]) throws {
            try TestSupport.writeBytes(Array(try JSONSerialization.data(withJSONObject: faults)), to: self.faults)
        }
    }

    func startLMS(course: String) throws -> LMS {
        let folder = TestSupport.temporaryFolder("lms")
        let process = try ChildProcess(try #require(TestSupport.which("python3")), [
            TestSupport.packageRoot + "/Tests/fixtures/fake_lms.py", course, folder + "/port", folder + "/log", folder + "/faults", Self.token,
        ])
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: folder + "/port") { usleep(50_000) }
        let port = String(decoding: TestSupport.read(folder + "/port"), as: UTF8.self)
        try #require(!port.isEmpty, "the fake LMS did not start")
        return LMS(url: "http://127.0.0.1:\(port)", log: folder + "/log", faults: folder + "/faults", process: process)
    }

    /// The example course published and synced into a device folder, with a token file.
    func device() throws -> (course: String, published: String, target: String, tokenFile: String) {
        let course = TestSupport.temporaryFolder("outbox") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let published = TestSupport.temporaryFolder("outbox") + "/published"
        #expect(try TestSupport.coursepack(["build", course, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("outbox") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let tokenFile = TestSupport.temporaryFolder("outbox") + "/token"
        try TestSupport.write(["token": Self.token + "\n"], under: (tokenFile as NSString).deletingLastPathComponent)
        chmod((tokenFile as NSString).deletingLastPathComponent + "/token", 0o600)
        return (course, published, target, (tokenFile as NSString).deletingLastPathComponent + "/token")
    }

    func answer(_ target: String, usage: String = Self.quiz, at time: String, fields: [String: Any]) throws -> TestSupport.ProcessResult {
        let file = TestSupport.temporaryFolder("answer") + "/answer.json"
        let body: [String: Any] = ["usage_id": usage, "timestamp": time, "fields": fields]
        try TestSupport.writeBytes(Array(try JSONSerialization.data(withJSONObject: body)), to: file)
        return try TestSupport.coursepack(["answers", target, "--add", file])
    }

    func states(_ target: String) throws -> [String] {
        let listed = try TestSupport.coursepack(["answers", target, "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        return entries.map { "\($0["timestamp"] ?? "") \($0["state"] ?? "")" }
    }

    func submit(_ published: String, _ target: String, _ lms: LMS, token: String) throws -> TestSupport.ProcessResult {
        try TestSupport.coursepack(["sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token])
    }

    @Test func answersReachTheLMSInOrderWithCAPANamesAndTheResultIsKept() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:02.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_0"]).status == 0)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z pending", "2026-11-23T09:00:02.000Z pending"])

        let result = try submit(published, target, lms, token: token)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("answers: 2 sent, 0 held (the block changed), 0 rejected, 0 kept for later"))
        // In timestamp order, with the names and values CAPA gives the quiz's radio group.
        let sent = lms.requests().map { ($0["fields"] as? [String: [String]]) ?? [:] }
        #expect(sent == [["input_offline_quiz_2_1": ["choice_0"]], ["input_offline_quiz_2_1": ["choice_1"]]])
        #expect(lms.requests().allSatisfy { ($0["authorization"] as? String) == "Bearer " + Self.token })
        // What the page shows is kept (not the LMS's whole answer, whose `contents` is HTML).
        let listed = try TestSupport.coursepack(["answers", target, "--json"]).stdout
        #expect(listed.contains(#"\"success\":\"incorrect\""#) && listed.contains(#"\"success\":\"correct\""#), "\(listed)")
        #expect(listed.contains(#"\"current_score\":1"#) && !listed.contains("contents"), "\(listed)")
        // Nothing is sent twice.
        #expect(try submit(published, target, lms, token: token).stdout.contains("answers: 0 sent"))
        #expect(lms.requests().count == 2)
    }

    @Test func aServerErrorKeepsTheAnswerAndTheNextFlushSendsItOnce() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        try lms.fail([Self.quiz: [500]])
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        #expect(try answer(target, at: "2026-11-23T09:00:02.000Z", fields: ["input_offline_quiz_2_1": "choice_0"]).status == 0)
        let first = try submit(published, target, lms, token: token)
        #expect(first.status == 1, "answers kept for later make the exit status 1")
        #expect(first.stdout.contains("answers: 0 sent, 0 held (the block changed), 0 rejected, 2 kept for later"))
        // The later answer waited for the earlier one: only one request reached the LMS.
        #expect(lms.requests().count == 1)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z pending", "2026-11-23T09:00:02.000Z pending"])
        let second = try submit(published, target, lms, token: token)
        #expect(second.status == 0)
        #expect(lms.requests().count == 3)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z sent", "2026-11-23T09:00:02.000Z sent"])
    }

    @Test func signInProblemsStopSendingAndRefusalsAreKeptWithTheLMSMessage() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        try lms.fail([Self.quiz: [401]])
        let refused = try submit(published, target, lms, token: token)
        #expect(refused.stderr.contains("refused the credentials (401/403): sign in again"))
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z pending"])
        try lms.fail([Self.quiz: [400]])
        _ = try submit(published, target, lms, token: token)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z rejected"])
        #expect(try TestSupport.coursepack(["answers", target]).stdout.contains("(Problem is closed.)"))
        // Rejected answers are not retried.
        _ = try submit(published, target, lms, token: token)
        #expect(lms.requests().count == 2)
    }

    /// problem_check refuses with HTTP 200 too (a closed or past-due problem, no attempts left,
    /// a submission too soon): `success` then holds the LMS's message instead of `correct`,
    /// `incorrect` or `submitted`, and the LMS's own page shows it as an alert. Such an answer is
    /// rejected with that message, shown, and not sent again; the three grades stay graded.
    @Test(arguments: [
        "The state of this problem has changed since you loaded this page. Please refresh your page.",
        "Problem is closed.",
        "You must wait at least 30 seconds between submissions.",
    ])
    func aRefusalInAnHTTP200IsRejectedNotGraded(message: String) throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        try lms.fail([Self.quiz: [["status": 200, "success": message, "contents": "<div>the problem</div>"]]])
        let refused = try submit(published, target, lms, token: token)
        #expect(refused.stdout.contains("answers: 0 sent, 0 held (the block changed), 1 rejected, 0 kept for later"), "\(refused.stdout)")
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z rejected"])
        #expect(try TestSupport.coursepack(["answers", target]).stdout.contains("(\(message))"))
        _ = try submit(published, target, lms, token: token)
        #expect(lms.requests().count == 1, "a refused answer is not sent again")
        // The grades the LMS's page renders stay graded: submitted (queued) is one of them.
        #expect(try answer(target, at: "2026-11-23T09:00:02.000Z", fields: ["input_offline_quiz_2_1": "choice_0"]).status == 0)
        try lms.fail([Self.quiz: [["status": 200, "success": "submitted", "contents": "<div>queued</div>"]]])
        _ = try submit(published, target, lms, token: token)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z rejected", "2026-11-23T09:00:02.000Z sent"])
    }

    @Test func anAnswerToAProblemChangedSinceIsHeld() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        // The course team rewrites the question; the publish changes the problem's content_hash.
        let file = course + "/problem/offline_quiz.xml"
        let text = String(decoding: TestSupport.read(file), as: UTF8.self).replacingOccurrences(of: "Which file does a client read first?", with: "Which file is read first?")
        try TestSupport.writeBytes(Array(text.utf8), to: file)
        #expect(try TestSupport.coursepack(["build", course, "--out", published, "-q"]).status == 0)
        let result = try submit(published, target, lms, token: token)
        #expect(result.stdout.contains("answers: 0 sent, 1 held (the block changed)"), "\(result.stdout)")
        #expect(lms.requests().isEmpty)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z conflict"])
    }

    /// Killed between sending and marking (once, or at every try): the answer stays `sending`, is
    /// sent again with the same Idempotency-Key, and the LMS grades it once.
    @Test(arguments: [1, 2]) func aClientKilledWhileSendingLosesNothing(kills: Int) throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        try lms.fail(["delay": [Self.quiz: 3]])
        for attempt in 1...kills {
            let client = try ChildProcess(TestSupport.coursepackBinary, [
                "sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token,
            ])
            for _ in 0..<100 where lms.requests().count < attempt { usleep(50_000) }
            kill(client.pid, SIGKILL)
            #expect(client.stop())
            // Killed mid-request: the answer is still there, marked as being sent.
            #expect(try states(target) == ["2026-11-23T09:00:01.000Z sending"])
        }
        try lms.fail([:])
        #expect(try submit(published, target, lms, token: token).status == 0)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z sent"])
        // Sent once per try, every time under the same key: only the first was graded.
        let tries = lms.requests()
        #expect(tries.count == kills + 1)
        let keys = Set(tries.compactMap { $0["idempotency_key"] as? String })
        #expect(keys.count == 1 && tries.allSatisfy { $0["idempotency_key"] is String }, "\(tries)")
        #expect(tries.filter { ($0["duplicate"] as? Bool) == true }.count == kills, "the repeats are recognised as such")
    }

    @Test func badAnswersAreRefusedWithExit2() throws {
        let (_, _, target, _) = try device()
        let unknown = try answer(target, usage: "block-v1:CoursepackX+CP101+2026+type@problem+block@nope", at: "2026-11-23T09:00:01.000Z", fields: ["input_nope_2_1": "x"])
        #expect(unknown.status == 2 && unknown.stderr.contains("is not installed here"))
        let badName = try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["q1": "x"])
        #expect(badName.status == 2 && badName.stderr.contains("CAPA input names"))
        #expect(try states(target).isEmpty)
    }

    @Test func blocksOpenedOfflineAreSentAsCompletionsOnceAndKeptOnFailure() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        for block in ["block-v1:CoursepackX+CP101+2026+type@html+block@welcome_page", Self.quiz] {
            #expect(try TestSupport.coursepack(["open", target, block]).status == 0)
        }
        try lms.fail(["completion": [500]])
        func submit() throws -> TestSupport.ProcessResult {
            try TestSupport.coursepack(["sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token, "--lms-username", "learner1"])
        }
        let failed = try submit()
        #expect(failed.status == 1 && failed.stdout.contains("2 completions kept for later"), "\(failed.stdout)\(failed.stderr)")
        let sent = try submit()
        #expect(sent.status == 0 && sent.stdout.contains("2 blocks opened offline sent as completions"), "\(sent.stdout)\(sent.stderr)")
        let batches = lms.requests().compactMap { $0["completion"] as? [String: Any] }
        #expect(batches.count == 2)
        #expect(batches.last?["username"] as? String == "learner1")
        #expect(batches.last?["course_key"] as? String == "course-v1:CoursepackX+CP101+2026")
        #expect((batches.last?["blocks"] as? [String: Double]) == [
            "block-v1:CoursepackX+CP101+2026+type@html+block@welcome_page": 1.0, Self.quiz: 1.0,
        ])
        // Nothing opened since: nothing more is sent.
        #expect(try submit().stdout.contains("0 blocks opened offline sent as completions"))
        #expect(lms.requests().compactMap { $0["completion"] as? [String: Any] }.filter { !(($0["blocks"] as? [String: Any]) ?? [:]).isEmpty }.count == 2)
    }
}
