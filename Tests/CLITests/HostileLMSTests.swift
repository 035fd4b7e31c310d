import Foundation
import Testing
import TestSupport

/// The LMS client against a hostile or misconfigured LMS, and a hostile manifest: credentials
/// never leave the configured origin, nothing unbounded is read or kept, nothing the LMS says
/// reaches the terminal raw, and two submits at once send each answer once.
extension OutboxTests {
    func submit(_ published: String, _ target: String, lmsURL: String, token: String, _ extra: [String] = []) throws -> TestSupport.ProcessResult {
        try TestSupport.coursepack(["sync", published, "--to", target, "--submit", "--lms-url", lmsURL, "--lms-token-file", token] + extra)
    }

    func outboxFile(_ target: String) throws -> String {
        try #require(TestSupport.files(under: target).first { $0.hasSuffix(".coursepack-sync/outbox.jsonl") }.map { target + "/" + $0 })
    }

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
    }

    // MARK: - Redirects (finding 1)

    /// The plain attack (a redirect to another host) with every redirect code: the token does not
    /// follow, the answer is kept with the reason, and is sent once the LMS answers.
    @Test(arguments: [301, 302, 303, 307, 308]) func aRedirectIsNeverFollowed(code: Int) throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        let elsewhere = try startLMS(course: course)
        defer { #expect(lms.process.stop() && elsewhere.process.stop(), "a fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        let path = "/courses/course-v1:CoursepackX+CP101+2026/xblock/\(Self.quiz)/handler/xmodule_handler/problem_check"
        try lms.fail([Self.quiz: [["redirect": code, "location": elsewhere.url + path]]])
        let redirected = try submit(published, target, lms, token: token)
        #expect(redirected.status == 1, "\(redirected.stdout)\(redirected.stderr)")
        #expect(redirected.stderr.contains("HTTP \(code), a redirect to \(elsewhere.url)") && redirected.stderr.contains("never followed"), "\(redirected.stderr)")
        #expect(elsewhere.requests().isEmpty, "the redirect was followed: \(elsewhere.requests())")
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z pending"])
        #expect(try TestSupport.coursepack(["answers", target]).stdout.contains("redirects are never followed"))
        #expect(try submit(published, target, lms, token: token).status == 0)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z sent"])
        #expect(lms.requests().count == 2 && elsewhere.requests().isEmpty)
    }

    /// A redirect to another path of the LMS itself is not followed either, nor one answering the
    /// completions batch.
    @Test func aRedirectWithinTheLMSOrOnCompletionsIsNotFollowed() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        let elsewhere = try startLMS(course: course)
        defer { #expect(lms.process.stop() && elsewhere.process.stop(), "a fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        #expect(try TestSupport.coursepack(["open", target, Self.quiz]).status == 0)
        try lms.fail([
            Self.quiz: [["redirect": 307, "location": "/login?next=/elsewhere"]],
            "completion": [["redirect": 308, "location": elsewhere.url + "/api/completion/v1/completion-batch"]],
        ])
        let result = try submit(published, target, lmsURL: lms.url, token: token, ["--lms-username", "learner1"])
        #expect(result.status == 1 && result.stderr.contains("HTTP 307, a redirect"), "\(result.stderr)")
        #expect(result.stdout.contains("1 completions kept for later (the LMS answered HTTP 308, a redirect"), "\(result.stdout)")
        #expect(lms.requests().count == 2, "one answer and one completions batch, nothing after: \(lms.requests())")
        #expect(elsewhere.requests().isEmpty)
    }

    // MARK: - Ids in URLs (finding 2)

    /// A manifest whose course id (or a usage id) would leave its path segment, or name another
    /// course, is refused before any request.
    @Test(arguments: [
        ("course-v1:CoursepackX+CP101+2026/../../../admin", nil), ("course-v1:CoursepackX+CP101+%2e%2e", nil),
        ("course-v1:CoursepackX+CP101+2026?next=x", nil), ("course-v1:CoursepackX+CP101+2026\\..\\..", nil),
        (nil, "block-v1:OtherX+CP101+2026+type@problem+block@offline_quiz"), (nil, "block-v1:CoursepackX+CP101+2026+type@problem+block@..%2F..%2Fadmin"),
    ] as [(String?, String?)])
    func aManifestWithIdsThatLeaveTheirSegmentIsRefused(courseID: String?, usageID: String?) throws {
        let course = TestSupport.temporaryFolder("outbox") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let published = TestSupport.temporaryFolder("outbox") + "/published"
        #expect(try TestSupport.coursepack(["build", course, "--out", published, "-q"]).status == 0)
        // The edited manifest.json is the publish (as builders wrote it before the split form).
        try TestSupport.removeSplitManifest(published)
        var manifest = String(decoding: TestSupport.read(published + "/manifest.json"), as: UTF8.self)
        if let courseID { manifest = manifest.replacingOccurrences(of: "\"course-v1:CoursepackX+CP101+2026\"", with: try Self.json(courseID)) }
        if let usageID { manifest = manifest.replacingOccurrences(of: "\"\(Self.quiz)\"", with: try Self.json(usageID)) }
        try TestSupport.writeBytes(Array(manifest.utf8), to: published + "/manifest.json")
        let target = TestSupport.temporaryFolder("outbox") + "/device"
        let synced = try TestSupport.coursepack(["sync", published, "--to", target])
        try #require(synced.status == 0, "\(synced.stderr)")
        #expect(try answer(target, usage: usageID ?? Self.quiz, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        let tokenFile = TestSupport.temporaryFolder("outbox") + "/token"
        try TestSupport.writeBytes(Array(Self.token.utf8), to: tokenFile)
        chmod(tokenFile, 0o600)
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let result = try submit(published, target, lmsURL: lms.url, token: tokenFile)
        #expect(result.status == 2 && result.stderr.contains("the course's manifest is refused"), "\(result.stdout)\(result.stderr)")
        #expect(lms.requests().isEmpty, "\(lms.requests())")
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z pending"])
    }

    static func json(_ text: String) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast().description
    }

    // MARK: - Plain http (finding 14)

    /// Hosts a resolver may take for this machine but that are not written as loopback, and a
    /// remote one: plain http to them is refused before any request, and allowed by the flag.
    @Test(arguments: ["127.1", "2130706433", "0x7f.0.0.1", "192.0.2.1"]) func plainHTTPToAHostNotWrittenAsLoopbackIsRefused(host: String) throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        let url = lms.url.replacingOccurrences(of: "127.0.0.1", with: host)
        let refused = try submit(published, target, lmsURL: url, token: token)
        #expect(refused.status == 2 && refused.stderr.contains("refusing to send credentials over plain http to \(host)"), "\(refused.stderr)")
        #expect(lms.requests().isEmpty)
        // The flag lets it through the policy (whether the HTTP stack then reaches such a
        // spelling of the address is its own business).
        let allowed = try submit(published, target, lmsURL: url, token: token, ["--allow-insecure-lms", "--connect-timeout", "2"])
        #expect(!allowed.stderr.contains("refusing to send credentials"), "\(allowed.stderr)")
    }

    // MARK: - Bounded answers (finding 7)

    /// A never-ending body and compressed bombs: cut while they arrive (peak memory shows it),
    /// the answer recorded as graded, and the outbox keeps none of it.
    @Test(arguments: [
        ["huge": 300 << 20], ["huge": 300 << 20, "unsized": true], ["bomb": "gzip", "size": 300 << 20], ["bomb": "zstd", "size": 300 << 20], ["bomb": "br", "size": 200 << 20],
    ] as [[String: any Sendable]])
    func aHugeOrPackedAnswerIsCutAndNotKept(fault: [String: any Sendable]) throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        try lms.fail([Self.quiz: [fault]])
        let time = try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/time") ? "/usr/bin/time" : nil, "GNU time is needed (apt-get install time)")
        let result = try TestSupport.run(time, ["-f", "peak-kb %M", TestSupport.coursepackBinary, "sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token])
        #expect(result.status == 0 && result.stdout.contains("answers: 1 sent"), "\(result.stdout)\(result.stderr)")
        let peak = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak-kb ") }.flatMap { Int($0.dropFirst(8)) } ?? Int.max
        #expect(peak < 150 << 10, "the client held \(peak) KB at its peak")
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z sent"])
        #expect(TestSupport.read(try outboxFile(target)).count < 8 << 10, "the outbox keeps only what a page shows")
        #expect(try TestSupport.coursepack(["answers", target]).stdout.contains("graded; the LMS's answer (over 256 KiB, or packed) was not kept"))
    }

    // MARK: - Control characters (finding 14)

    /// Escapes in a refusal, in a grade, and in an outbox an older version wrote raw: none is
    /// printed by `sync` or `answers`, as text or JSON.
    @Test func controlCharactersFromTheLMSNeverReachTheTerminal() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        try lms.fail([Self.quiz: [["status": 400, "error": "\u{1B}[31mClosed\u{1B}]0;owned\u{07}\u{9B}2J\u{7F}\u{1B}[0m"]]])
        let sent = try submit(published, target, lms, token: token)
        #expect(!Self.hasControlCharacters(sent.stdout + sent.stderr), "\(sent.stdout)\(sent.stderr)")
        try lms.fail([Self.quiz: [["status": 200, "success": "\u{1B}[2Jcorrect\u{9B}0m", "current_score": 1, "total_possible": 1]]])
        #expect(try answer(target, at: "2026-11-23T09:00:02.000Z", fields: ["input_offline_quiz_2_1": "choice_0"]).status == 0)
        let graded = try submit(published, target, lms, token: token)
        #expect(graded.status == 0 && !Self.hasControlCharacters(graded.stdout + graded.stderr), "\(graded.stdout)\(graded.stderr)")
        // An outbox written before the LMS's text was cleaned.
        let journal = try outboxFile(target)
        let raw = #"{"entry":{"id":"old","usage_id":"\#(Self.quiz)","timestamp":"2026-11-23T09:00:03.000Z","fields":{"input_offline_quiz_2_1":["choice_0"]},"state":"rejected","attempts":1,"message":"\u001b[5mblink\u009b2J","result":"\u001b]52;c;cGF5bG9hZA==\u0007"}}"#
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data((raw + "\n").utf8))
        try handle.close()
        let listed = try TestSupport.coursepack(["answers", target])
        #expect(listed.stdout.contains("(Closed") && listed.stdout.contains("blink") && listed.stdout.contains("1 sent, 0 conflict, 2 rejected"), "\(listed.stdout)")
        #expect(!Self.hasControlCharacters(listed.stdout + listed.stderr), "\(listed.stdout)")
        let json = try TestSupport.coursepack(["answers", target, "--json"]).stdout
        #expect(!json.contains("\\u001b") && !json.contains("\u{9B}") && !json.contains("\\u0007") && !Self.hasControlCharacters(json), "\(json)")
        #expect(json.contains(#"\"success\":\"correct\""#), "\(json)")
    }

    // MARK: - Submits at once (finding 6)

    /// A second submit while the first is sending: refused by the target's lock, nothing sent
    /// twice (the old order, sending before the lock, sent the answer marked `sending` again).
    @Test func aSecondSubmitWhileTheFirstIsSendingSendsNothing() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        try lms.fail(["delay": [Self.quiz: 4]])
        let first = try ChildProcess(TestSupport.coursepackBinary, ["sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token])
        for _ in 0..<100 where lms.requests().isEmpty { usleep(50_000) }
        let second = try submit(published, target, lms, token: token)
        #expect(second.status == 2 && second.stderr.contains("another sync into this target is running"), "\(second.stdout)\(second.stderr)")
        first.process.waitUntilExit()
        #expect(first.process.terminationStatus == 0)
        #expect(lms.requests().count == 1)
        #expect(try states(target) == ["2026-11-23T09:00:01.000Z sent"])
    }

    /// Three submits started together, with two answers and completions: every answer and every
    /// completion reaches the LMS once.
    @Test func submitsStartedTogetherSendEachAnswerOnce() throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        #expect(try answer(target, at: "2026-11-23T09:00:02.000Z", fields: ["input_offline_quiz_2_1": "choice_0"]).status == 0)
        #expect(try TestSupport.coursepack(["open", target, Self.quiz]).status == 0)
        try lms.fail(["delay": [Self.quiz: 0.5]])
        let runs = try (0..<3).map { _ in
            try ChildProcess(TestSupport.coursepackBinary, [
                "sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token, "--lms-username", "learner1",
            ])
        }
        for run in runs { run.process.waitUntilExit() }
        let answers = lms.requests().filter { $0["usage_id"] is String }
        #expect(answers.count == 2, "\(answers)")
        #expect(Set(answers.compactMap { $0["idempotency_key"] as? String }).count == answers.count)
        #expect(lms.requests().filter { $0["completion"] != nil }.count == 1)
        #expect(try states(target).allSatisfy { $0.hasSuffix(" sent") })
    }
}
