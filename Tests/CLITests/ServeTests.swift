import Foundation
import Manifest
import Testing
import TestSupport

/// `coursepack serve` from a second process over loopback: the course list and outline, a
/// page, a byte range of a video, MIME types, traversal refused, and a bounded load test.
@Suite(.serialized) struct ServeTests {
    /// Starts `coursepack serve TARGET --port 0`; returns the process and the base URL it printed.
    /// `softFileLimit`: the open-file limit the server starts with (systemd's default is 1024).
    static func startServer(_ target: String, _ options: [String] = [], softFileLimit: Int? = nil) throws -> (ChildProcess, String, String) {
        let folder = TestSupport.temporaryFolder("serve")
        let limit = softFileLimit.map { "ulimit -Sn \($0) && " } ?? ""
        let process = try ChildProcess("/bin/sh", ["-c", limit + "target=\"$1\" out=\"$2\"; shift 2; exec \"$0\" serve \"$target\" --port 0 \"$@\" > \"$out\" 2>&1",
                                                   TestSupport.coursepackBinary, target, folder + "/out"] + options)
        var printed = ""
        for _ in 0..<200 {
            printed = String(decoding: TestSupport.read(folder + "/out"), as: UTF8.self)
            if printed.contains("serving") { break }
            usleep(50_000)
        }
        let url = try #require(printed.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }, "\(printed)")
        return (process, url, printed)
    }

    /// What a client sees for each path: status, headers, and the body (base64, when short).
    static let client = """
        import base64, http.client, json, sys, urllib.parse
        base = urllib.parse.urlsplit(sys.argv[1])
        results = {}
        for item in json.loads(sys.argv[2]):
            connection = http.client.HTTPConnection(base.hostname, base.port, timeout=60)  # a loaded CI machine reads a full outbox slowly
            body = item.get("body")
            if body is not None:
                body = body.encode() * item.get("repeat", 1)
            if item.get("chunked"):
                pieces = [body[i:i + 4096] for i in range(0, len(body), 4096)]
                connection.request(item.get("method", "GET"), item["path"], body=iter(pieces), headers=item.get("headers", {}), encode_chunked=True)
            else:
                connection.request(item.get("method", "GET"), item["path"], body=body, headers=item.get("headers", {}))
            response = connection.getresponse()
            body = response.read()
            results[item["name"]] = {"status": response.status, "type": response.getheader("Content-Type"),
                "range": response.getheader("Content-Range"), "length": len(body), "cache": response.getheader("Cache-Control"), "location": response.getheader("Location"), "frames": response.getheader("X-Frame-Options"),
                "body": base64.b64encode(body).decode() if len(body) <= 200000 else ""}
        print(json.dumps(results))
        """

    struct Answer {
        let status: Int
        let type: String
        let range: String
        let cache: String
        let location: String
        let frames: String
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    static func get(_ base: String, _ requests: [[String: Any]]) throws -> [String: Answer] {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: requests), as: UTF8.self)
        let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", client, base, json])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: [String: Any]])
        return object.mapValues { answer in
            Answer(status: answer["status"] as? Int ?? 0, type: answer["type"] as? String ?? "", range: answer["range"] as? String ?? "",
                   cache: answer["cache"] as? String ?? "", location: answer["location"] as? String ?? "", frames: answer["frames"] as? String ?? "", body: [UInt8](Data(base64Encoded: answer["body"] as? String ?? "") ?? Data()))
        }
    }

    static func metaTag(_ secret: String) -> String { "<meta name=\"coursepack-serve-secret\" content=\"\(secret)\">" }

    /// A served page without what serve put into its head: the secret, then the events script.
    static func withoutServeHead(_ page: String, secret: String) -> String {
        guard let tag = page.range(of: metaTag(secret)), let script = page.range(of: "</script>", range: tag.upperBound..<page.endIndex) else { return page }
        return String(page[..<tag.lowerBound]) + String(page[script.upperBound...])
    }

    /// The run's secret, as the page script reads it from a served page.
    static func secret(in page: Answer) -> String? {
        guard let start = page.text.range(of: "<meta name=\"coursepack-serve-secret\" content=\"") else { return nil }
        let secret = page.text[start.upperBound...].prefix { $0 != "\"" }
        return secret.count == 64 ? String(secret) : nil
    }

    /// The headers the page script sends from a served page: the secret it read, JSON, and what
    /// a browser adds to a same-origin fetch.
    static func pageHeaders(_ base: String) throws -> [String: String] {
        let page = try #require(try get(base, [["name": "page", "path": "/CoursepackX+CP101+2026/problem/offline_quiz/index.html"]])["page"])
        let secret = try #require(Self.secret(in: page), "no secret in the served page")
        let origin = base.hasSuffix("/") ? String(base.dropLast()) : base
        return ["Content-Type": "application/json", "X-Coursepack-Secret": secret, "Origin": origin, "Sec-Fetch-Site": "same-origin"]
    }

    /// The example course built and synced into a fresh target; returns the target.
    static func syncedExample() throws -> String {
        let published = TestSupport.temporaryFolder("serve") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("serve") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        return target
    }

    @Test func serveGivesOutlinePagesAndVideoRangesAndNothingOutsideTheTarget() throws {
        let published = TestSupport.temporaryFolder("serve") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("serve") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let course = target + exampleFolder
        // A link out of the target, as a hostile archive or a careless user could leave one.
        #expect(symlink("/etc", course + "/html/welcome_page/elsewhere") == 0)

        let (server, base, printed) = try Self.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        #expect(base.hasPrefix("http://127.0.0.1:"), "bound to loopback by default: \(printed)")

        let video = "/CoursepackX+CP101+2026/video/lecture_video/static/lecture.mp4"
        let answers = try Self.get(base, [
            ["name": "root", "path": "/"],
            ["name": "outline", "path": "/CoursepackX%2BCP101%2B2026/"],
            ["name": "page", "path": "/CoursepackX+CP101+2026/html/welcome_page/index.html"],
            ["name": "range", "path": video, "headers": ["Range": "bytes=100-199"]],
            ["name": "stylesheet", "path": "/CoursepackX+CP101+2026/video/lecture_video/coursepack.css"],
            ["name": "dotdot", "path": "/../../../etc/passwd"],
            ["name": "inner-dotdot", "path": "/CoursepackX+CP101+2026/../../../etc/passwd"],
            ["name": "encoded", "path": "/%2e%2e/%2e%2e/%2e%2e/etc/passwd"],
            ["name": "encoded-slash", "path": "/..%2f..%2f..%2fetc/passwd"],
            ["name": "double-encoded", "path": "/%252e%252e/%252e%252e/etc/passwd"],
            ["name": "state", "path": "/.coursepack-sync/target.json"],
            ["name": "symlink", "path": "/CoursepackX+CP101+2026/html/welcome_page/elsewhere/passwd"],
            ["name": "missing", "path": "/CoursepackX+CP101+2026/html/nothing/index.html"],
        ])
        let root = try #require(answers["root"])
        #expect(root.status == 200 && root.type.hasPrefix("text/html"))
        #expect(String(decoding: root.body, as: UTF8.self).contains("href=\"CoursepackX+CP101+2026/index.html\""))
        let outline = try #require(answers["outline"])
        #expect(outline.status == 200)
        #expect(String(decoding: outline.body, as: UTF8.self).contains("href=\"html/welcome_page/index.html\""))
        let page = try #require(answers["page"])
        #expect(page.status == 200 && page.type.hasPrefix("text/html"))
        let secret = try #require(Self.secret(in: page))
        #expect(Array(Self.withoutServeHead(page.text, secret: secret).utf8) == TestSupport.read(course + "/html/welcome_page/index.html"),
                "the page as it is on disk, with the run's secret and the events script in its head")
        let range = try #require(answers["range"])
        let file = TestSupport.read(target + video)
        #expect(range.status == 206, "\(range.status)")
        #expect(range.type == "video/mp4", "\(range.type)")
        #expect(range.range == "bytes 100-199/\(file.count)", "\(range.range)")
        #expect(range.body == Array(file[100..<200]))
        let stylesheet = try #require(answers["stylesheet"])
        #expect(stylesheet.status == 200 && stylesheet.type.hasPrefix("text/css"), "\(stylesheet.status) \(stylesheet.type)")
        for name in ["dotdot", "inner-dotdot", "encoded", "encoded-slash", "double-encoded", "state", "symlink"] {
            let answer = try #require(answers[name])
            #expect([400, 403, 404].contains(answer.status), "\(name): \(answer.status)")
            #expect(!String(decoding: answer.body, as: UTF8.self).contains("root:"), "\(name) leaked /etc/passwd")
        }
        #expect(answers["missing"]?.status == 404)
    }

    /// A problem page served by `coursepack serve` posts its answer to the serving origin; it
    /// lands in the outbox of the course that has the block, for `sync --submit`.
    @Test func answersPostedToTheServerGoToTheCourseOutbox() throws {
        let published = TestSupport.temporaryFolder("serve") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("serve") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let (server, base, _) = try Self.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let headers = try Self.pageHeaders(base)
        let quiz = "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"
        let good = #"{"usage_id": "\#(quiz)", "timestamp": "2026-11-23T09:00:01.000Z", "fields": {"input_offline_quiz_2_1": "choice_1"}}"#
        let unknown = #"{"usage_id": "block-v1:CoursepackX+CP101+2026+type@problem+block@nope", "timestamp": "2026-11-23T09:00:02.000Z", "fields": {}}"#
        let posted = try Self.get(base, [
            ["name": "good", "path": "/_coursepack/answers", "method": "POST", "body": good, "headers": headers],
            ["name": "unknown", "path": "/_coursepack/answers", "method": "POST", "body": unknown, "headers": headers],
            ["name": "garbage", "path": "/_coursepack/answers", "method": "POST", "body": "not json", "headers": headers],
        ])
        let accepted = try #require(posted["good"])
        let unknownAnswer = try #require(posted["unknown"])
        let garbageAnswer = try #require(posted["garbage"])
        let acceptedText = String(decoding: accepted.body, as: UTF8.self)
        #expect(accepted.status == 201, "\(acceptedText)")
        #expect(acceptedText.contains(quiz))
        #expect(unknownAnswer.status == 400)
        let unknownText = String(decoding: unknownAnswer.body, as: UTF8.self)
        #expect(unknownText.contains("is not installed here"), "\(unknownText)")
        #expect(garbageAnswer.status == 400)
        let listed = try TestSupport.coursepack(["answers", target])
        #expect(listed.stdout.contains("1 answers: 1 pending"), "\(listed.stdout)")
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/.coursepack-sync/outbox.jsonl"))
    }

    /// A bounded load from a second process (wrk, 5 s) on loopback: every answer a 200.
    @Test func serveHoldsALoadFromASecondProcess() throws {
        guard let wrk = TestSupport.which("wrk") else {
            Issue.record("wrk is not installed: the load test needs it (apt-get install wrk; make test installs it)")
            return
        }
        let published = TestSupport.temporaryFolder("serve") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("serve") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let (server, base, _) = try Self.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let load = try TestSupport.run("/usr/bin/timeout", ["30", wrk, "-t2", "-c16", "-d5s", "--latency", base + "/CoursepackX+CP101+2026/html/welcome_page/index.html"])
        #expect(load.status == 0, "\(load.stderr)")
        print(load.stdout)
        let line = try #require(load.stdout.split(separator: "\n").first { $0.hasPrefix("Requests/sec:") })
        let rate = Double(line.split(separator: " ").last ?? "") ?? 0
        #expect(rate > 50, "\(load.stdout)")
        #expect(!load.stdout.contains("Non-2xx") && !load.stdout.contains("Socket errors"), "\(load.stdout)")
    }
}
