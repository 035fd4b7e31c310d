import Foundation
import Testing
import TestSupport

/// `coursepack serve` against hostile pages, clients and folder contents (issue 29, findings 3,
/// 8 and 13), from a second process over loopback.
@Suite(.serialized) struct ServeTrustTests {
    static let answers = "/_coursepack/answers"
    static let quiz = "block-v1:CoursepackX+CP101+2026+type@problem+block@offline_quiz"
    static func answer(_ value: String = "choice_1", extra: String = "") -> String {
        #"{"usage_id": "\#(quiz)", "timestamp": "2026-11-23T09:00:01.000Z", "fields": {"input_offline_quiz_2_1": "\#(value)"}\#(extra)}"#
    }

    static func pendingAnswers(_ target: String) throws -> Int {
        let listed = try TestSupport.coursepack(["answers", target, "--json"])
        let entries = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        return entries?.count ?? -1
    }

    /// Finding 3: another site's page posts an answer (a cross-origin `text/plain` POST needs no
    /// preflight). Refused, and so is every other way in without the page's secret, from
    /// another origin, or under another Host name (DNS rebinding).
    @Test func onlyServesOwnPagesCanPostAnswers() throws {
        let target = try ServeTests.syncedExample()
        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let good = try ServeTests.pageHeaders(base)
        let port = try #require(URL(string: base)?.port)
        func with(_ changes: [String: String?]) -> [String: String] {
            var headers = good
            for (name, value) in changes { headers[name] = value }
            return headers
        }
        let wrongSecret = String(repeating: "0", count: 64)
        let attacks: [(String, [String: String], Int)] = [
            ("cross-site text/plain, the plain attack", ["Content-Type": "text/plain", "Origin": "http://evil.example"], 403),
            ("secret, but from another site", with(["Origin": "http://evil.example"]), 403),
            ("secret, Origin null (a sandboxed frame, a file:// page)", with(["Origin": "null"]), 403),
            ("secret, same host on another port", with(["Origin": "http://127.0.0.1:\(port + 1)"]), 403),
            ("secret, Sec-Fetch-Site cross-site", with(["Sec-Fetch-Site": "cross-site"]), 403),
            ("secret, Sec-Fetch-Site same-site", with(["Sec-Fetch-Site": "same-site"]), 403),
            ("no secret", with(["X-Coursepack-Secret": nil]), 403),
            ("wrong secret of the right length", with(["X-Coursepack-Secret": wrongSecret]), 403),
            ("secret cut short", with(["X-Coursepack-Secret": String(good["X-Coursepack-Secret"]!.prefix(63))]), 403),
            ("DNS rebinding: another Host", with(["Host": "evil.example:\(port)", "Origin": "http://evil.example:\(port)"]), 403),
            ("Host naming another port", with(["Host": "127.0.0.1:\(port + 1)", "Origin": nil]), 403),
            ("text/plain with the secret", with(["Content-Type": "text/plain"]), 415),
            ("a form", with(["Content-Type": "application/x-www-form-urlencoded"]), 415),
            ("multipart", with(["Content-Type": "multipart/form-data; boundary=x"]), 415),
            ("no content type", with(["Content-Type": nil]), 415),
            ("JSON look-alike type", with(["Content-Type": "application/jsonp"]), 415),
        ]
        var requests: [[String: Any]] = attacks.map { ["name": $0.0, "path": Self.answers, "method": "POST", "body": Self.answer(), "headers": $0.1] }
        requests.append(["name": "a page, rebound", "path": "/CoursepackX+CP101+2026/problem/offline_quiz/index.html", "headers": ["Host": "evil.example:\(port)"]])
        requests.append(["name": "own page, no Origin (a script, curl)", "path": Self.answers, "method": "POST", "body": Self.answer(), "headers": with(["Origin": nil, "Sec-Fetch-Site": nil])])
        requests.append(["name": "localhost name", "path": Self.answers, "method": "POST", "body": Self.answer(),
                         "headers": with(["Host": "localhost:\(port)", "Origin": "http://localhost:\(port)"])])
        let got = try ServeTests.get(base, requests)
        for (name, _, status) in attacks {
            let answer = try #require(got[name])
            #expect(answer.status == status, "\(name): \(answer.status) \(answer.text)")
            #expect(answer.type.hasPrefix("application/json") && answer.text.contains("\"error\""), "\(name): \(answer.text)")
        }
        let rebound = try #require(got["a page, rebound"])
        #expect(rebound.status == 403 && !rebound.text.contains("coursepack-serve-secret"), "a rebound name gets no page, and no secret")
        #expect(got["own page, no Origin (a script, curl)"]?.status == 201)
        #expect(got["localhost name"]?.status == 201)
        #expect(try Self.pendingAnswers(target) == 2, "only the two answers with the secret from serve's own origin were kept")
    }

    /// Only a page this device holds can have posted an answer: one for a block the course lists
    /// online only (it has no page here) or for one whose folder is gone (evicted, or left out
    /// under a budget) is refused, even with the page's secret, and nothing is kept for it.
    @Test func answersToBlocksWithNoPageHereAreRefused() throws {
        let target = try ServeTests.syncedExample()
        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let headers = try ServeTests.pageHeaders(base)
        let chat = "block-v1:CoursepackX+CP101+2026+type@discussion+block@course_chat"
        let online = #"{"usage_id": "\#(chat)", "timestamp": "2026-11-23T09:00:01.000Z", "fields": {"input_course_chat_2_1": "x"}}"#
        let first = try ServeTests.get(base, [["name": "online only", "path": Self.answers, "method": "POST", "body": online, "headers": headers]])
        let refusedOnline = try #require(first["online only"])
        #expect(refusedOnline.status == 400 && refusedOnline.text.contains("online only here"), "\(refusedOnline.status) \(refusedOnline.text)")

        let folder = target + exampleFolder + "/problem/offline_quiz"
        #expect(rename(folder, folder + ".evicted") == 0)
        let second = try ServeTests.get(base, [["name": "evicted", "path": Self.answers, "method": "POST", "body": Self.answer(), "headers": headers]])
        let refusedEvicted = try #require(second["evicted"])
        #expect(refusedEvicted.status == 400 && refusedEvicted.text.contains("not installed here"), "\(refusedEvicted.status) \(refusedEvicted.text)")
        #expect(try Self.pendingAnswers(target) == 0, "neither answer was kept")

        #expect(rename(folder + ".evicted", folder) == 0)
        let third = try ServeTests.get(base, [["name": "installed", "path": Self.answers, "method": "POST", "body": Self.answer(), "headers": headers]])
        #expect(third["installed"]?.status == 201, "the same answer is taken once its page is back: \(third["installed"]?.text ?? "")")
        #expect(try Self.pendingAnswers(target) == 1)
    }

    /// Bound to every interface, serve takes the names of this machine and refuses any other
    /// (a rebinding service's name for 127.0.0.1, user info, no Host at all).
    @Test func onEveryInterfaceOnlyThisMachinesNamesAreServed() throws {
        let target = try ServeTests.syncedExample()
        let (server, printed, _) = try ServeTests.startServer(target, ["--bind", "0.0.0.0", "--allow-host", "Kiosk.Classroom.lan"])
        defer { #expect(server.stop(), "the server outlived its test") }
        let port = try #require(URL(string: printed)?.port)
        let base = "http://127.0.0.1:\(port)/"
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        let hostName = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let hosts: [(String, Int)] = [
            ("127.0.0.1:\(port)", 200), ("localhost:\(port)", 200), ("\(hostName):\(port)", 200), ("LOCALHOST:\(port)", 200),
            ("kiosk.classroom.lan:\(port)", 200), ("evil.classroom.lan:\(port)", 403),
            ("evil.example:\(port)", 403), ("127.0.0.1.nip.io:\(port)", 403), ("user@127.0.0.1:\(port)", 403), ("127.0.0.1", 403),
            ("", 403),
        ]
        let got = try ServeTests.get(base, hosts.map { ["name": $0.0, "path": "/", "headers": ["Host": $0.0]] })
        for (host, status) in hosts { #expect(got[host]?.status == status, "Host \(host): \(got[host]?.status ?? 0)") }
        // HTTP/1.0 may leave the Host header out: refused too.
        let bare = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
            s.sendall(b"GET / HTTP/1.0\\r\\n\\r\\n")
            print(s.recv(100).split(b"\\r\\n")[0].decode())
            """, String(port)])
        #expect(bare.stdout.contains(" 403"), "\(bare.stdout) \(bare.stderr)")
    }

    /// An answer's body has 10 s to arrive: one sent a byte at a time is cut off with 408.
    @Test func anAnswerSentAByteAtATimeIsCutOff() throws {
        let target = try ServeTests.syncedExample()
        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let headers = try ServeTests.pageHeaders(base)
        let port = try #require(URL(string: base)?.port)
        let head = "POST \(Self.answers) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
            + "X-Coursepack-Secret: \(headers["X-Coursepack-Secret"] ?? "")\r\nContent-Length: 1000\r\n\r\n"
        let result = try TestSupport.run("/usr/bin/timeout", ["60", try #require(TestSupport.which("python3")), "-c", """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
            s.sendall(sys.argv[2].encode())
            began, answer = time.monotonic(), b""
            s.settimeout(0.5)
            while time.monotonic() - began < 25 and not answer:
                try:
                    s.send(b" ")
                    answer = s.recv(200)
                except socket.timeout:
                    continue
                except OSError:
                    break
            print(round(time.monotonic() - began, 1), answer.split(b"\\r\\n")[0].decode())
            """, String(port), head])
        let words = result.stdout.split(separator: " ")
        #expect(result.stdout.contains(" 408"), "\(result.stdout) \(result.stderr)")
        #expect((Double(words.first ?? "") ?? 99) < 14, "cut off after \(result.stdout)")
    }

    /// Each run has its own secret, and pages are not cached: a page kept from an earlier run
    /// (or a copy saved elsewhere) cannot post. Nor can another site frame one (clickjacking).
    @Test func eachRunHasItsOwnSecretAndPagesAreNotCached() throws {
        let target = try ServeTests.syncedExample()
        var secrets: [String] = []
        for _ in 0..<2 {
            let (server, base, _) = try ServeTests.startServer(target)
            defer { #expect(server.stop(), "the server outlived its test") }
            let page = try #require(try ServeTests.get(base, [["name": "page", "path": "/"]])["page"])
            #expect(page.cache == "no-store")
            #expect(page.frames == "SAMEORIGIN", "another site cannot frame a page to have it submitted")
            secrets.append(try #require(ServeTests.secret(in: page)))
        }
        #expect(secrets[0] != secrets[1])
    }

    /// An answer is limited in size while it is read (60 × 1 MB was accepted), in fields and in
    /// value lengths; an id the page picks is not used.
    @Test func answersAreBoundedInSizeAndShape() throws {
        let target = try ServeTests.syncedExample()
        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let headers = try ServeTests.pageHeaders(base)
        let manyFields = (0..<150).map { #""input_offline_quiz_\#($0)_1": "x""# }.joined(separator: ", ")
        var requests: [[String: Any]] = (0..<60).map { ["name": "megabyte \($0)", "path": Self.answers, "method": "POST", "body": "x", "repeat": 1 << 20, "headers": headers] }
        requests += [
            ["name": "over the limit, chunked", "path": Self.answers, "method": "POST", "body": Self.answer(String(repeating: "y", count: 70_000)), "chunked": true, "headers": headers],
            ["name": "many fields", "path": Self.answers, "method": "POST",
             "body": #"{"usage_id": "\#(Self.quiz)", "timestamp": "2026-11-23T09:00:01.000Z", "fields": {\#(manyFields)}}"#, "headers": headers],
            ["name": "long value", "path": Self.answers, "method": "POST", "body": Self.answer(String(repeating: "z", count: 20_000)), "headers": headers],
            ["name": "page's own id", "path": Self.answers, "method": "POST", "body": Self.answer(extra: #", "id": "chosen-by-page""#), "headers": headers],
        ]
        let got = try ServeTests.get(base, requests)
        for index in 0..<60 { #expect(got["megabyte \(index)"]?.status == 413, "\(index): \(got["megabyte \(index)"]?.status ?? 0)") }
        #expect(got["over the limit, chunked"]?.status == 413, "\(got["over the limit, chunked"]?.text ?? "")")
        #expect(got["many fields"]?.status == 400 && got["many fields"]?.text.contains("over the limit") == true, "\(got["many fields"]?.text ?? "")")
        #expect(got["long value"]?.status == 400 && got["long value"]?.text.contains("over the limit") == true, "\(got["long value"]?.text ?? "")")
        let own = try #require(got["page's own id"])
        #expect(own.status == 201 && !own.text.contains("chosen-by-page"), "\(own.text)")
        let outbox = target + exampleFolder + "/.coursepack-sync/outbox.jsonl"
        #expect(TestSupport.read(outbox).count < 4_096, "one small answer kept")
    }

    /// A course's outbox takes answers up to its quota, in entries and in bytes, then answers
    /// 507 with the reason; the journal is only appended to.
    @Test(arguments: ["entries", "bytes"]) func aFullOutboxRefusesWithInsufficientStorage(kind: String) throws {
        let target = try ServeTests.syncedExample()
        let outbox = target + exampleFolder + "/.coursepack-sync/outbox.jsonl"
        // A journal at its quota of answers still to be sent, as a page posting without end
        // would leave it: compaction has nothing it may drop (settled answers would give way).
        var journal = ""
        if kind == "entries" {
            for index in 0..<10_000 {
                journal += #"{"entry":{"attempts":0,"fields":{"input_a_2_1":["x"]},"id":"old-\#(index)","state":"pending","timestamp":"2026-11-23T09:00:00Z","usage_id":"\#(Self.quiz)"}}"# + "\n"
            }
        } else {
            let line = #"{"entry":{"attempts":0,"fields":{"input_a_2_1":["\#(String(repeating: "x", count: 8_000))"]},"id":"ID","state":"pending","timestamp":"2026-11-23T09:00:00Z","usage_id":"q"}}"#
            for index in 0..<1_048 { journal += line.replacingOccurrences(of: "\"ID\"", with: "\"big-\(index)\"") + "\n" }
        }
        try TestSupport.write(["outbox.jsonl": journal], under: target + exampleFolder + "/.coursepack-sync")
        let before = TestSupport.read(outbox)
        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let headers = try ServeTests.pageHeaders(base)
        let got = try ServeTests.get(base, (0..<3).map { ["name": "post \($0)", "path": Self.answers, "method": "POST", "body": Self.answer(), "headers": headers] })
        for index in 0..<3 {
            let answer = try #require(got["post \(index)"])
            #expect(answer.status == 507, "\(answer.status) \(answer.text)")
            #expect(answer.text.contains("outbox is full"), "\(answer.text)")
        }
        let unchanged = TestSupport.read(outbox) == before  // not in #expect: a diff of 8 MB takes minutes
        #expect(unchanged, "nothing appended to a full outbox")
    }

    /// Finding 13: a link inside a course folder that points into the state (`.coursepack-sync`
    /// of the course or of the target), at a state file, at a link to one, or out of the target;
    /// and the same state reached by encodings, case and trailing variants.
    @Test func nothingResolvingIntoTheStateOrOutsideIsServed() throws {
        let target = try ServeTests.syncedExample()
        let course = target + exampleFolder
        let state = course + "/.coursepack-sync"
        let page = course + "/html/welcome_page"
        try TestSupport.write(["outbox.jsonl": #"{"entry":{"id":"SECRET-ANSWER"}}"# + "\n"], under: state)
        let links: [(String, String)] = [
            ("state", "../../.coursepack-sync"),                      // the course's state folder
            ("targetstate", "../../../.coursepack-sync"),              // the target's
            ("outbox.txt", "../../.coursepack-sync/outbox.jsonl"),     // one state file
            ("chain.txt", "outbox.txt"),                               // a link to that link
            ("absolute.txt", state + "/outbox.jsonl"),                 // absolute
            ("etc", "/etc"),                                           // out of the target
            ("with space", "../../.coursepack-sync"),
        ]
        for (name, destination) in links { #expect(symlink(destination, page + "/" + name) == 0, "\(name)") }
        // A folder whose index.html is a link to the outbox.
        try FileManager.default.createDirectory(atPath: course + "/html/trap", withIntermediateDirectories: true)
        #expect(symlink("../../.coursepack-sync/outbox.jsonl", course + "/html/trap/index.html") == 0)
        #expect(mkfifo(page + "/pipe", 0o600) == 0)

        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let prefix = "/CoursepackX+CP101+2026/html/welcome_page/"
        let paths = [
            prefix + "state/outbox.jsonl", prefix + "targetstate/target.json", prefix + "outbox.txt", prefix + "chain.txt",
            prefix + "absolute.txt", prefix + "etc/passwd", prefix + "with%20space/outbox.jsonl", prefix + "st%61te/outbox.jsonl",
            prefix + "state/", prefix + "state", prefix + "pipe", "/CoursepackX+CP101+2026/html/trap/", "/CoursepackX+CP101+2026/html/trap/index.html",
            "/CoursepackX+CP101+2026/.coursepack-sync/outbox.jsonl", "/CoursepackX+CP101+2026/%2ecoursepack-sync/outbox.jsonl",
            "/CoursepackX+CP101+2026/%252ecoursepack-sync/outbox.jsonl", "/CoursepackX+CP101+2026/%2Ecoursepack-sync%2Foutbox.jsonl",
            "/CoursepackX+CP101+2026/.Coursepack-Sync/outbox.jsonl", "/CoursepackX+CP101+2026/.coursepack-sync./outbox.jsonl",
            "/CoursepackX+CP101+2026/.coursepack-sync/outbox.jsonl/", "/CoursepackX+CP101+2026//.coursepack-sync//outbox.jsonl",
            "/CoursepackX+CP101+2026/html/../.coursepack-sync/outbox.jsonl", "/CoursepackX+CP101+2026/html/%2e%2e/.coursepack-sync/outbox.jsonl",
            "/.coursepack-sync/target.json", "/.coursepack-sync/state.lock", "/CoursepackX+CP101+2026/.coursepack-sync/search.sqlite",
            "/CoursepackX+CP101+2026/html\\..\\.coursepack-sync\\outbox.jsonl", "/CoursepackX+CP101+2026/html/welcome_page/index.html%00.txt",
        ]
        var requests: [[String: Any]] = paths.map { ["name": $0, "path": $0] }
        requests += paths.prefix(4).map { ["name": "HEAD " + $0, "path": $0, "method": "HEAD"] }
        let got = try ServeTests.get(base, requests)
        for (name, answer) in got {
            #expect([403, 404].contains(answer.status), "\(name): \(answer.status) \(answer.text.prefix(200))")
            #expect(!answer.text.contains("SECRET-ANSWER") && !answer.text.contains("root:") && !answer.text.contains("\"courses\""), "\(name) leaked state")
        }
        // A folder asked for without its slash is redirected on this host, whatever the
        // request's leading slashes (`//name/` would be another host's URL).
        try FileManager.default.createDirectory(atPath: target + "/evil.example", withIntermediateDirectories: true)
        let redirects = try ServeTests.get(base, [["name": "double", "path": "//evil.example"], ["name": "triple", "path": "///evil.example"]])
        for (name, answer) in redirects { #expect(answer.status == 301 && answer.location == "/evil.example/", "\(name): \(answer.status) \(answer.location)") }
        // Links that stay among the course's files still work.
        #expect(symlink("index.html", page + "/alias.html") == 0)
        let alias = try #require(try ServeTests.get(base, [["name": "alias", "path": prefix + "alias.html"]])["alias"])
        #expect(alias.status == 200 && alias.text.contains("coursepack-serve-secret"))
    }

    /// Finding 8: 1,100 idle connections from another process, against a server started with
    /// the usual soft limit of 1,024 open files (where accept() had failed); a normal request is
    /// still answered within a few seconds, and the idle ones (and one sending its head a byte
    /// at a time) are closed after the idle timeout.
    @Test func idleConnectionsNeitherBlockTheServerNorStayOpen() throws {
        let target = try ServeTests.syncedExample()
        let (server, base, _) = try ServeTests.startServer(target, ["--idle-timeout", "3"], softFileLimit: 1_024)
        defer { #expect(server.stop(), "the server outlived its test") }
        let report = try Self.flood(base, connections: 1_100, wait: 9)
        #expect(report["opened"] as? Int == 1_100, "\(report)")
        let answered = try #require(report["answered_in"] as? Double, "\(report)")
        // Where the hard open-file limit keeps the cap under 1,100, the request waits for idle
        // connections to time out (3 s each round); with room for them, it does not wait.
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let cap = max(1, (Int(min(limit.rlim_max, 1 << 30)) - 128) / 2)
        let rounds = cap >= 1_101 ? 0 : (1_100 + cap) / cap
        #expect(answered < Double(3 * rounds + 3), "a normal request took \(answered) s behind 1,100 idle connections (cap \(cap))")
        #expect(report["closed"] as? Int == 1_100, "idle connections closed by the server after the timeout: \(report)")
        let dribble = try #require(report["dribble_closed_after"] as? Double, "\(report)")
        #expect(dribble < 7, "a head sent a byte at a time was cut off after \(dribble) s")
        #expect(TestSupport.isAlive(server.pid))
    }

    /// The connection cap: more connections than it allows wait in the listen queue; the
    /// server keeps no more sockets than the cap and still answers once idle ones time out.
    @Test func theConnectionCapBoundsWhatTheServerHolds() throws {
        let target = try ServeTests.syncedExample()
        let (server, base, _) = try ServeTests.startServer(target, ["--idle-timeout", "2", "--max-connections", "100"])
        defer { #expect(server.stop(), "the server outlived its test") }
        let report = try Self.flood(base, connections: 300, wait: 9, countSocketsOf: server.pid)
        let answered = try #require(report["answered_in"] as? Double, "\(report)")
        #expect(answered < 8, "answered once idle connections timed out: \(answered) s")
        let sockets = try #require(report["most_sockets"] as? Int, "\(report)")
        // The listening socket, and a few accepted in the same read as the one that hit the cap.
        #expect(sockets <= 100 + 8, "the server held \(sockets) sockets with a cap of 100")
        #expect(TestSupport.isAlive(server.pid))
    }

    /// Opens `connections` idle TCP connections (bounded in count and time), times a normal GET
    /// behind them, dribbles a request head a byte every 0.5 s on one more, then waits up to
    /// `wait` seconds for the server to close them.
    static func flood(_ base: String, connections: Int, wait: Double, countSocketsOf pid: Int32? = nil) throws -> [String: Any] {
        let script = """
            import json, os, resource, socket, sys, threading, time, urllib.parse, urllib.request
            base, count, wait, pid = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 256)), hard))
            parts = urllib.parse.urlsplit(base)
            report, idle, most = {}, [], [0]
            def sockets():
                if pid > 0:
                    try: most[0] = max(most[0], sum(1 for f in os.listdir(f"/proc/{pid}/fd") if os.readlink(f"/proc/{pid}/fd/{f}").startswith("socket:")))
                    except OSError: pass
            for _ in range(count):
                s = socket.socket(); s.settimeout(5)
                try: s.connect((parts.hostname, parts.port))
                except OSError: break
                idle.append(s)
            report["opened"] = len(idle)
            started = time.monotonic()
            try:
                urllib.request.urlopen(base, timeout=15).read()
                report["answered_in"] = time.monotonic() - started
            except Exception as error:
                report["error"] = str(error)
            sockets()
            dribbler = socket.create_connection((parts.hostname, parts.port), timeout=15)
            def dribble():
                began = time.monotonic()
                try:
                    for byte in b"GET / HTTP/1.1\\r\\nHost: x\\r\\nX-Slow: " + b"a" * 100:
                        dribbler.send(bytes([byte])); time.sleep(0.5)
                        if time.monotonic() - began > wait + 5: return
                except OSError:
                    pass
                report["dribble_closed_after"] = time.monotonic() - began
            thread = threading.Thread(target=dribble); thread.start()
            closed, deadline = 0, time.monotonic() + wait
            for s in idle:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                try:
                    if s.recv(1) == b"": closed += 1
                except OSError:
                    pass
                sockets()
            report["closed"] = closed
            report["most_sockets"] = most[0]
            thread.join(wait + 10)
            for s in idle: s.close()
            print(json.dumps(report))
            """
        let result = try TestSupport.run("/usr/bin/timeout", ["90", try #require(TestSupport.which("python3")), "-c", script, base,
                                                              String(connections), String(wait), String(pid ?? 0)])
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout) \(result.stderr)")
    }
}
