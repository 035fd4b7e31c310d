import Foundation
import Testing
import TestSupport

/// Learner events: served pages post them to `coursepack serve`, which keeps them in the
/// course's bounded events journal; `sync --submit` sends them in batches to the plugin's events
/// endpoint (the fake LMS), each settled by its own result.
@Suite(.serialized) struct EventBatchTests {
    let base = OutboxTests()
    static let video = "block-v1:CoursepackX+CP101+2026+type@video+block@lecture_video"
    static let videoPage = exampleFolder + "/video/lecture_video/index.html"
    static let outlinePage = exampleFolder + "/index.html"

    struct Posted {
        var page: String
        var name: String
        var second: Int
        var data: [String: Any] = [:]
    }

    static func time(_ second: Int) -> String {
        String(format: "2026-11-23T09:%02d:%02d.000Z", second / 60, second % 60)
    }

    /// Posts `events` to a server started on `target` (in batches of at most 100 per page, as the
    /// page script does), with a page's secret and headers; returns each request's answer.
    func post(_ target: String, _ events: [Posted], serveOptions: [String] = [], answer: [String: Any]? = nil) throws -> [ServeTests.Answer] {
        let (server, url, _) = try ServeTests.startServer(target, serveOptions)
        defer { #expect(server.stop(), "the server outlived its test") }
        let headers = try ServeTests.pageHeaders(url)
        var requests: [[String: Any]] = []
        var pages: [String] = []
        for event in events where !pages.contains(event.page) { pages.append(event.page) }
        for page in pages {
            let mine = events.filter { $0.page == page }
            for start in stride(from: 0, to: mine.count, by: 100) {
                let batch = mine[start..<min(start + 100, mine.count)].map { ["name": $0.name, "timestamp": Self.time($0.second), "data": $0.data] as [String: Any] }
                let body = String(decoding: try JSONSerialization.data(withJSONObject: ["page": page, "events": batch]), as: UTF8.self)
                requests.append(["name": String(format: "%04d", requests.count), "path": "/_coursepack/events", "method": "POST", "body": body, "headers": headers])
            }
        }
        if let answer {
            let body = String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self)
            requests.append(["name": "answer", "path": "/_coursepack/answers", "method": "POST", "body": body, "headers": headers])
        }
        let answers = try ServeTests.get(url, requests)
        return answers.keys.sorted().compactMap { answers[$0] }
    }

    /// The events journal as an independent reader sees it: each event's last record, and the
    /// count of events dropped unsent.
    func journal(_ target: String) -> (events: [[String: Any]], dropped: Int) {
        let text = String(decoding: TestSupport.read(target + exampleFolder + "/.coursepack-sync/events.jsonl"), as: UTF8.self)
        var latest: [String: [String: Any]] = [:]
        var order: [String] = []
        var dropped = 0
        for line in text.split(separator: "\n") {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
            if let count = record["dropped"] as? Int { dropped = count }
            guard let entry = record["entry"] as? [String: Any], let id = entry["id"] as? String else { continue }
            if latest[id] == nil { order.append(id) }
            latest[id] = entry
        }
        return (order.compactMap { latest[$0] }, dropped)
    }

    func eventRequests(_ lms: OutboxTests.LMS) -> [[String: Any]] {
        lms.requests().filter { $0["events"] != nil }
    }

    func setUp(events: [Posted], script: [String: Any]?, serveOptions: [String] = []) throws -> (published: String, target: String, token: String, lms: OutboxTests.LMS) {
        let (course, published, target, token) = try base.device()
        let posted = try post(target, events, serveOptions: serveOptions)
        #expect(posted.allSatisfy { $0.status == 201 }, "\(posted.map { "\($0.status) \($0.text)" })")
        let lms = try base.startLMS(course: course)
        try lms.fail(script.map { ["events": $0] } ?? [:])
        return (published, target, token, lms)
    }

    @Test func servedPagesRecordEventsForTheirOwnBlock() throws {
        let (_, _, target, _) = try base.device()
        let answers = try post(target, [
            Posted(page: Self.videoPage, name: "play_video", second: 1, data: ["currentTime": 0, "id": "forged"]),
            Posted(page: Self.videoPage, name: "pause_video", second: 2, data: ["currentTime": 4.5]),
            Posted(page: Self.outlinePage, name: "page_view", second: 3, data: ["path": Self.outlinePage]),
        ])
        #expect(answers.map(\.status) == [201, 201], "\(answers.map(\.text))")
        let events = journal(target).events
        #expect(events.map { $0["name"] as? String } == ["play_video", "pause_video", "page_view"])
        #expect(events.map { $0["usage_id"] as? String } == [Self.video, Self.video, nil], "the block is the page's")
        #expect(events.allSatisfy { $0["state"] as? String == "pending" })
        let data = events.first?["data"] as? [String: Any]
        #expect(data?["id"] as? String == "lecture_video" && data?["code"] as? String == "html5", "\(String(describing: data))")
        let raw = String(decoding: TestSupport.read(target + exampleFolder + "/.coursepack-sync/events.jsonl"), as: UTF8.self)
        #expect(raw.contains(#""currentTime":0"#) && raw.contains(#""currentTime":4.5"#), "numbers stay numbers: \(raw)")
        #expect(events.map { $0["timestamp"] as? String } == [Self.time(1), Self.time(2), Self.time(3)])

        let refused = try post(target, [
            Posted(page: Self.videoPage, name: "delete_everything", second: 4),
            Posted(page: "/nowhere/index.html", name: "page_view", second: 5),
        ])
        #expect(refused.map(\.status) == [400, 404], "\(refused.map(\.text))")
        let (server, url, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        var headers = try ServeTests.pageHeaders(url)
        headers["X-Coursepack-Secret"] = String(repeating: "0", count: 64)
        let body = #"{"page": "\#(Self.videoPage)", "events": [{"name": "play_video", "timestamp": "\#(Self.time(6))", "data": {}}]}"#
        let forged = try ServeTests.get(url, [["name": "forged", "path": "/_coursepack/events", "method": "POST", "body": body, "headers": headers]])
        #expect(forged["forged"]?.status == 403, "no event without the page's secret")
        #expect(journal(target).events.count == 3)
    }

    @Test func eventsAreSentInBatchesOfAtMostAHundredOldestFirst() throws {
        let events = (0..<250).map { Posted(page: Self.videoPage, name: $0 % 2 == 0 ? "play_video" : "pause_video", second: 249 - $0) }
        let (published, target, token, lms) = try setUp(events: events, script: [:])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let result = try base.submit(published, target, lms, token: token)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("events: 250 sent, 0 refused, 0 kept for later in 3 requests"), "\(result.stdout)")
        let sent = eventRequests(lms)
        #expect(sent.map { ($0["events"] as? [String])?.count ?? 0 } == [100, 100, 50])
        let times = sent.flatMap { ($0["items"] as? [[String: Any]] ?? []).compactMap { $0["timestamp"] as? String } }
        #expect(times == (0..<250).map(Self.time), "each block's events in timestamp order")
        #expect(sent.allSatisfy { ($0["sent_at"] as? String)?.hasSuffix("Z") == true })
        #expect(Set(sent.flatMap { $0["events"] as? [String] ?? [] }).count == 250)
        #expect(journal(target).events.isEmpty, "the events the LMS took are dropped from the journal")
        #expect(try base.submit(published, target, lms, token: token).status == 0)
        #expect(eventRequests(lms).count == 3, "nothing is sent twice")
    }

    @Test func aServerErrorKeepsTheEventsAndTheNextRunSendsEachOnce() throws {
        let events = (0..<4).map { Posted(page: Self.videoPage, name: "play_video", second: $0) }
        let (published, target, token, lms) = try setUp(events: events, script: ["requests": [502]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let first = try base.submit(published, target, lms, token: token)
        #expect(first.status == 1 && first.stdout.contains("events: 0 sent, 0 refused, 4 kept for later"), "\(first.stdout)\(first.stderr)")
        #expect(first.stderr.contains("CP619"), "\(first.stderr)")
        #expect(journal(target).events.map { $0["state"] as? String } == Array(repeating: "pending", count: 4))
        let second = try base.submit(published, target, lms, token: token)
        #expect(second.status == 0 && second.stdout.contains("events: 4 sent"), "\(second.stdout)\(second.stderr)")
        let sent = eventRequests(lms)
        #expect(sent.count == 2 && sent.first?["events"] as? [String] == sent.last?["events"] as? [String], "the same ids again")
        #expect(sent.allSatisfy { ($0["duplicates"] as? [String])?.isEmpty == true }, "each event reached the tracking log once")
        #expect(journal(target).events.isEmpty)
    }

    @Test func aRetryWaitsForRetryAfterAndARefusalIsKeptAndNeverResent() throws {
        let events = [
            Posted(page: Self.videoPage, name: "play_video", second: 1),
            Posted(page: Self.videoPage, name: "pause_video", second: 2),
            Posted(page: Self.outlinePage, name: "page_view", second: 3),
        ]
        let script: [String: Any] = ["items": ["play_video": [["status": "retry", "retry_after": 3600, "message": "tracking backend down"]],
                                               "page_view": [["status": "refused", "reason": "invalid", "message": "no"]]]]
        let (published, target, token, lms) = try setUp(events: events, script: script)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let first = try base.submit(published, target, lms, token: token)
        #expect(first.stdout.contains("events: 1 sent, 1 refused, 1 kept for later"), "\(first.stdout)")
        let kept = journal(target).events
        #expect(kept.map { $0["name"] as? String } == ["play_video", "page_view"])
        #expect(kept.map { $0["state"] as? String } == ["pending", "refused"])
        #expect((kept.first?["not_before"] as? String)?.isEmpty == false)
        let second = try base.submit(published, target, lms, token: token)
        #expect(second.stdout.contains("1 waiting for the LMS's retry time"), "\(second.stdout)")
        #expect(eventRequests(lms).count == 1, "not before retry_after, and a refusal never again")
    }

    @Test func anLMSWithoutThePluginKeepsTheEventsAndStillGetsCompletions() throws {
        let events = [Posted(page: Self.videoPage, name: "page_view", second: 1), Posted(page: Self.videoPage, name: "play_video", second: 2)]
        let (published, target, token, lms) = try setUp(events: events, script: nil)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let result = try TestSupport.coursepack(["sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token, "--lms-username", "learner1"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("the LMS has no events endpoint"), "\(result.stdout)")
        #expect(journal(target).events.map { $0["state"] as? String } == ["pending", "pending"], "kept, not lost")
        let completions = lms.requests().compactMap { $0["completion"] as? [String: Any] }
        #expect((completions.last?["blocks"] as? [String: Double])?[Self.video] == 1.0, "the page view reaches it as a completion: \(completions)")
    }

    @Test func overItsCapTheJournalDropsTheOldestEventsAndNeverAnAnswer() throws {
        let (_, _, target, _) = try base.device()
        let events = (0..<8).map { Posted(page: Self.videoPage, name: "play_video", second: $0) }
        let answer: [String: Any] = ["usage_id": OutboxTests.quiz, "timestamp": Self.time(0), "fields": ["input_offline_quiz_2_1": "choice_1"]]
        let first = try post(target, Array(events.prefix(5)), serveOptions: ["--max-events", "5"], answer: answer)
        #expect(first.map(\.status) == [201, 201], "\(first.map(\.text))")
        let second = try post(target, Array(events.suffix(3)), serveOptions: ["--max-events", "5"])
        #expect(second.map(\.status) == [201] && second.first?.text.contains("\"dropped\":\"3\"") == true, "\(second.map(\.text))")
        let kept = journal(target)
        #expect(kept.events.map { $0["timestamp"] as? String } == (3..<8).map(Self.time), "the newest five")
        #expect(kept.dropped == 3)
        #expect(try base.states(target) == ["\(Self.time(0)) pending"], "the answer is untouched")
    }

    @Test func notEnrolledKeepsEverythingAndNamesTheCourse() throws {
        let events = [Posted(page: Self.videoPage, name: "play_video", second: 1)]
        let (published, target, token, lms) = try setUp(events: events, script: ["requests": [403]])
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let result = try base.submit(published, target, lms, token: token)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("CP620") && result.stderr.contains("not enrolled in course course-v1:CoursepackX+CP101+2026"), "\(result.stderr)")
        #expect(!result.stderr.contains("sign in again"), "not a credentials problem")
        #expect(journal(target).events.map { $0["state"] as? String } == ["pending"])
    }

    @Test func answersToBlocksChangedOnTheLMSAreReportedAndHeld() throws {
        let (course, published, target, token) = try base.device()
        let lms = try base.startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        let changed: [String: Any] = ["status": "refused", "reason": "content_changed", "message": "changed", "current_version": "77ab"]
        try lms.fail(["batch": ["items": [OutboxTests.quiz: [changed]], "requests": [403]],
                      "versions": ["outdated": [OutboxTests.quiz: ["current_version": "77ab"]]]])
        #expect(try base.answer(target, at: Self.time(1), fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        let refused = try base.submit(published, target, lms, token: token)
        #expect(refused.stderr.contains("not enrolled in course course-v1:CoursepackX+CP101+2026"), "\(refused.stderr)")
        #expect(try base.states(target) == ["\(Self.time(1)) pending"], "nothing lost to the 403")
        let asked = lms.requests().compactMap { $0["versions"] as? [String: String] }.first ?? [:]
        #expect(asked[OutboxTests.quiz]?.isEmpty == false, "the installed version is asked about")
        #expect(refused.stderr.contains("CP621") && refused.stderr.contains(OutboxTests.quiz), "\(refused.stderr)")
        let result = try base.submit(published, target, lms, token: token)
        #expect(result.stdout.contains("0 sent, 1 held (the block changed)"), "\(result.stdout)")
        #expect(try base.states(target) == ["\(Self.time(1)) conflict"], "refused content_changed: held, never resent")
        let listed = try TestSupport.coursepack(["answers", target]).stdout
        #expect(listed.contains("sync to get the new version and answer again"), "\(listed)")
    }

    @Test func anAnswerToRetryIsNotSentBeforeRetryAfterNorAreItsBlocksLaterOnes() throws {
        let (course, published, target, token) = try base.device()
        let lms = try base.startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        try lms.fail(["batch": ["items": [OutboxTests.quiz: [["status": "retry", "retry_after": 3600, "message": "the LMS answered HTTP 502"]]]]])
        #expect(try base.answer(target, at: Self.time(1), fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        let first = try base.submit(published, target, lms, token: token)
        #expect(first.stdout.contains("answers: 0 sent, 0 held (the block changed), 0 rejected, 1 kept for later"), "\(first.stdout)")
        #expect(try base.answer(target, at: Self.time(2), fields: ["input_offline_quiz_2_1": "choice_0"]).status == 0)
        let second = try base.submit(published, target, lms, token: token)
        #expect(second.status == 1 && second.stdout.contains("2 kept for later (2 waiting for the LMS's retry time)"), "\(second.stdout)")
        #expect(lms.requests().filter { $0["batch"] != nil }.count == 1, "nothing of the block sent before retry_after")
        #expect(try base.states(target) == ["\(Self.time(1)) pending", "\(Self.time(2)) pending"])
    }
}
