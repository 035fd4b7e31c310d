import Foundation
import Manifest
import SafeText
import Testing
import TestSupport

@testable import SyncClient

/// What the LMS client lets through: ids that become URL path segments, the LMS origin, text the
/// LMS sends back, the idempotency key. The flush tests post to a real fake LMS on loopback.
@Suite struct LMSClientTests {
    static let course = "course-v1:CoursepackX+CP101+2026"
    static let quiz = "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"

    // MARK: - Opaque keys

    @Test(arguments: [
        ("course-v1:CoursepackX+CP101+2026", "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"),
        ("course-v1:MITx+6.002x+2026_T1", "block-v1:MITx+6.002x+2026_T1+type@html+block@a1b2c3~d:e-f"),
        ("course-v1:FooXé+1.23x+Ωmega", "block-v1:FooXé+1.23x+Ωmega+type@problem+block@问题"),
        ("edX/DemoX/Demo_Course", "i4x://edX/DemoX/problem/quiz_1"),
        ("edX/DemoX/Demo_Course", "block-v1:edX+DemoX+Demo_Course+type@problem+block@quiz_1"),
    ])
    func validKeysPass(course: String, usage: String) throws {
        let parsed = try OpaqueKey.course(course)
        try OpaqueKey.checkUsage(usage, of: parsed, courseID: course)
    }

    /// The plain attack (`/../` in the course id) and the other ways to leave the segment or the
    /// path: encoded dots, a query or fragment, backslashes, Unicode dots, spaces, control
    /// characters, empty or dot-only parts, extra parts.
    @Test(arguments: [
        "course-v1:CoursepackX+CP101+2026/../../../admin", "course-v1:CoursepackX+CP101+%2e%2e", "course-v1:CoursepackX+CP101+2026%2F..",
        "course-v1:CoursepackX+CP101+2026?next=/admin", "course-v1:CoursepackX+CP101+2026#x", "course-v1:CoursepackX+CP101+2026\\..\\..",
        "course-v1:CoursepackX+CP101+\u{2024}\u{2024}", "course-v1:CoursepackX+CP101+\u{FF0E}\u{FF0E}", "course-v1:A+B+\u{3002}",
        "course-v1:A+B+..", "course-v1:A+B+.", "course-v1:A+B", "course-v1:A+B+C+D", "course-v1:A++C", "course-v1:A+B+C D",
        "course-v1:A+B+C\n", "course-v1:A+B+C\u{1B}[2J", "course-v1:A+B+⒈⒈", "A/../C", "../../admin", "A/B", "A/B/C/D", "",
        "course-v1:A+B+C/", "//evil.example/A+B+C",
    ])
    func hostileCourseIDsAreRefused(course: String) {
        #expect(throws: OpaqueKey.Invalid.self) { try OpaqueKey.course(course) }
    }

    @Test(arguments: [
        "block-v1:CoursepackX+CP101+2026+type@problem+block@../../admin", "block-v1:CoursepackX+CP101+2026+type@problem+block@%2e%2e",
        "block-v1:CoursepackX+CP101+2026+type@problem+block@q?x=1", "block-v1:CoursepackX+CP101+2026+type@problem+block@q#x",
        "block-v1:CoursepackX+CP101+2026+type@problem+block@q\\x", "block-v1:CoursepackX+CP101+2026+type@problem+block@\u{2024}\u{2024}",
        "block-v1:CoursepackX+CP101+2026+type@problem+block@..", "block-v1:CoursepackX+CP101+2026+type@../x+block@q",
        "block-v1:CoursepackX+CP101+2026+type@problem", "block-v1:CoursepackX+CP101+2026+type@problem+block@q+extra@x",
        // A block of another course, however it is written.
        "block-v1:OtherX+CP101+2026+type@problem+block@offline_quiz", "block-v1:CoursepackX+CP101+2027+type@problem+block@offline_quiz",
        "i4x://OtherX/CP101/problem/offline_quiz", "i4x://CoursepackX/CP101/problem/../x", "i4x://CoursepackX/CP101/problem",
        "https://evil.example/x", "offline_quiz",
    ])
    func hostileUsageIDsAreRefused(usage: String) throws {
        let course = try OpaqueKey.course(Self.course)
        #expect(throws: OpaqueKey.Invalid.self) { try OpaqueKey.checkUsage(usage, of: course, courseID: Self.course) }
    }

    /// Whatever an id holds, it is one segment of the handler's path.
    @Test(arguments: ["a/../b", "a?b", "a#b", "a%2e", "a\\b", "..", ".", "a b", "é/ü"])
    func anIdIsOnePathSegment(id: String) throws {
        let sender = AnswerSender(origin: try LMSOrigin("https://lms.example.org/prefix"), courseID: id, credential: nil)
        let url = try #require(sender.handlerURL(for: id))
        #expect(url.host == "lms.example.org" && url.query == nil && url.fragment == nil)
        let encoded = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)).percentEncodedPath
        let segments = encoded.split(separator: "/", omittingEmptySubsequences: false).map { $0.removingPercentEncoding ?? "?" }
        #expect(segments == ["", "prefix", "courses", id, "xblock", id, "handler", "xmodule_handler", "problem_check"], "\(url.absoluteString)")
        #expect(!url.absoluteString.contains("/../") && !url.absoluteString.contains("/./") && !url.absoluteString.contains("\\"))
    }

    // MARK: - The LMS origin

    @Test(arguments: ["http://127.0.0.1:8000", "http://127.9.9.9", "http://localhost:18000", "http://[::1]:8000", "http://[0:0:0:0:0:0:0:1]", "https://lms.example.org", "https://10.0.0.1:8443/lms/"])
    func loopbackOrHTTPSIsAccepted(url: String) throws {
        _ = try LMSOrigin(url)
    }

    /// Plain http elsewhere, and hosts that only look like loopback to a reader.
    @Test(arguments: [
        "http://lms.example.org", "http://10.0.0.1:8000", "http://127.0.0.1.evil.example", "http://localhost.evil.example",
        "http://0177.0.0.1", "http://2130706433", "http://127.1", "http://0x7f.0.0.1", "http://[::ffff:10.0.0.1]", "HTTP://LMS.EXAMPLE.ORG",
    ])
    func plainHTTPToAnotherHostIsRefused(url: String) throws {
        #expect(throws: LMSOrigin.Refusal.self) { try LMSOrigin(url) }
        // The flag lets the operator choose it, for hosts that are well formed.
        if !["http://0177.0.0.1", "http://2130706433", "http://127.1", "http://0x7f.0.0.1"].contains(url) {
            #expect(try LMSOrigin(url, allowInsecure: true).scheme == "http")
        }
    }

    /// Every URL the client builds is on its origin, which `LMSRequest` checks before sending.
    @Test(arguments: ["https://lms.example.org", "https://lms.example.org:8443/", "https://lms.example.org/prefix/", "http://[::1]:8000", "http://127.0.0.1:18000"])
    func theHandlerIsOnTheOrigin(url: String) throws {
        let origin = try LMSOrigin(url)
        let sender = AnswerSender(origin: origin, courseID: Self.course, credential: nil)
        #expect(origin.owns(try #require(sender.handlerURL(for: Self.quiz))))
        #expect(!origin.owns(try #require(URL(string: "https://evil.example/courses/x"))))
        #expect(!origin.owns(try #require(URL(string: origin.base.replacingOccurrences(of: "://", with: "://user@") + "/x"))))
    }

    @Test(arguments: [
        "https://user:pass@lms.example.org", "https://lms.example.org@evil.example", "https://lms.example.org\\@evil.example",
        "https://lms.example.org?x=1", "https://lms.example.org#x", "https://lms.example.org/../admin", "https://lms.example.org/%2e%2e",
        "ftp://lms.example.org", "file:///etc/passwd", "lms.example.org", "https://", "https://lms example.org", "https://lms.example.org\n",
        "https://lm\u{FF0E}example.org", "javascript:alert(1)",
    ])
    func malformedLMSURLsAreRefused(url: String) {
        #expect(throws: LMSOrigin.Refusal.self) { try LMSOrigin(url, allowInsecure: true) }
    }

    // MARK: - Text from the LMS

    @Test(arguments: [
        ("\u{1B}[31mred\u{1B}[0m", "red"), ("\u{1B}]0;owned\u{07}title", "title"), ("\u{1B}]8;;http://x\u{1B}\\link", "link"),
        ("\u{9B}31mc1", "c1"), ("a\u{7F}b\u{0}c\u{8}d", "abcd"), ("line\nbreak\ttab\r", "line break tab "), ("\u{202E}evil", "evil"),
        ("\u{1B}c\u{1B}(Bplain", "plain"), ("caf\u{E9} \u{2713}", "caf\u{E9} \u{2713}"),
    ])
    func controlCharactersAreRemoved(given: String, expected: String) {
        #expect(RemoteText.clean(given) == expected)
    }

    @Test func remoteTextIsBounded() {
        #expect(RemoteText.clean(String(repeating: "x", count: 10_000), limit: 300).count == 300)
    }

    @Test func onlyWhatAPageShowsIsKeptOfAGrade() throws {
        let body = #"{"success": "correct\u001b[2J", "current_score": 1, "total_possible": 2, "contents": "<div>\#(String(repeating: "x", count: 50_000))</div>"}"#
        let kept = try #require(AnswerSender.result(from: Data(body.utf8)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(kept.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["success", "current_score", "total_possible"], "\(kept)")
        #expect(object["success"] as? String == "correct" && (object["current_score"] as? NSNumber)?.doubleValue == 1 && (object["total_possible"] as? NSNumber)?.doubleValue == 2)
        #expect(AnswerSender.result(from: Data(#"{"success": true, "current_score": "x"}"#.utf8)) == nil)
        #expect(AnswerSender.result(from: Data("<html>".utf8)) == nil)
        #expect(AnswerSender.message(from: Data(#"{"error": "\u001b[31mclosed\u001b[0m"}"#.utf8)) == "closed")
    }

    // MARK: - Idempotency

    @Test func theIdempotencyKeyIsTheEntryIdOrItsHash() {
        #expect(AnswerSender.idempotencyKey(for: "2026-11-23T09:00:01.000Z-offline_quiz-42") == "2026-11-23T09:00:01.000Z-offline_quiz-42")
        let header = AnswerSender.idempotencyKey(for: "a\r\nX-Evil: 1")
        #expect(header.hasPrefix("sha256-") && header.count == 71 && header == AnswerSender.idempotencyKey(for: "a\r\nX-Evil: 1"))
        #expect(AnswerSender.idempotencyKey(for: String(repeating: "a", count: 500)).hasPrefix("sha256-"))
        #expect(AnswerSender.idempotencyKey(for: "é") != AnswerSender.idempotencyKey(for: "e"))
    }

    // MARK: - Token files

    @Test func aTokenFileOthersMayWriteIsRefusedAndOneTheyMayReadWarned() throws {
        let file = TestSupport.temporaryFolder("token") + "/token"
        try TestSupport.writeBytes(Array("secret-token\n".utf8), to: file)
        chmod(file, 0o600)
        var warnings: [String] = []
        #expect(try LMSCredential.load(file: file, environment: [:], warn: { warnings.append($0) }) == .bearer("secret-token"))
        #expect(warnings.isEmpty)
        chmod(file, 0o644)
        _ = try LMSCredential.load(file: file, environment: [:], warn: { warnings.append($0) })
        #expect(warnings.count == 1 && warnings[0].contains("chmod 600"))
        for mode: mode_t in [0o666, 0o620, 0o602] {
            chmod(file, mode)
            #expect(throws: SyncError.self) { try LMSCredential.load(file: file, environment: [:]) }
        }
    }

    @Test(arguments: ["tok\u{0}en", "tok\u{1}en", "Cookie: sessionid=a\u{1B}b", "tok\u{7F}", "tök"])
    func aCredentialWithControlCharactersIsRefused(line: String) throws {
        let file = TestSupport.temporaryFolder("token") + "/token"
        try TestSupport.writeBytes(Array(line.utf8), to: file)
        chmod(file, 0o600)
        #expect(throws: SyncError.self) { try LMSCredential.load(file: file, environment: [:]) }
        #expect(throws: SyncError.self) { try LMSCredential.load(file: nil, environment: ["COURSEPACK_LMS_TOKEN": line]) }
    }
}
