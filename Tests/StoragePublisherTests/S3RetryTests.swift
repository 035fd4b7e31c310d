import AWSSigV4
import Foundation
import StoragePublisher
import Testing
import TestSupport

/// S3Store against a scripted HTTP server: throttling and 5xx are retried with backoff, a
/// refusal is not, and the message names what was refused.
@Suite(.serialized)
struct S3RetryTests {
    /// Answers requests with the given statuses in turn (then 200), logging `METHOD PATH`.
    static let server = """
        import http.server, json, sys
        port_file, log_file, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
        codes = {503: "SlowDown", 500: "InternalError", 403: "SignatureDoesNotMatch"}
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length: self.rfile.read(length)
                with open(log_file, "a") as log: log.write(f"{self.command} {self.path}\\n")
                status = plan.pop(0) if plan else 200
                body = b"" if status == 200 else f"<Error><Code>{codes[status]}</Code><Message>scripted</Message></Error>".encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", '"e"')
                self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD": self.wfile.write(body)
            do_PUT = do_GET = do_HEAD = do_POST = do_DELETE = answer
            def log_message(self, *args): pass
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        open(port_file, "w").write(str(httpd.server_address[1]))
        httpd.serve_forever()
        """

    static func withServer(_ plan: [Int], _ body: (S3Store, () -> [String]) async throws -> Void) async throws {
        let folder = TestSupport.temporaryFolder("flaky-s3")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(TestSupport.which("python3")))
        process.arguments = ["-c", server, folder + "/port", folder + "/log", "[" + plan.map(String.init).joined(separator: ",") + "]"]
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: folder + "/port") { usleep(50_000) }
        usleep(50_000)
        let port = String(decoding: TestSupport.read(folder + "/port"), as: UTF8.self)
        let store = S3Store(configuration: .init(
            bucket: "courses", prefix: "c", region: "us-east-1", credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret"),
            endpoint: URL(string: "http://127.0.0.1:\(port)"), pathStyle: true, attempts: 4, initialBackoff: 0.05))
        try await body(store) { String(decoding: TestSupport.read(folder + "/log"), as: UTF8.self).split(separator: "\n").map(String.init) }
    }

    static let metadata = ObjectMetadata(
        contentType: "application/json", cacheControl: "no-cache", size: 2, sha256: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")

    @Test func throttlingAndServerErrorsAreRetried() async throws {
        try await Self.withServer([503, 500]) { store, log in
            try await store.put("manifest.json", data: Data("{}".utf8), metadata: Self.metadata)
            #expect(log() == Array(repeating: "PUT /courses/c/manifest.json", count: 3))
        }
    }

    @Test func persistentFailureEndsAfterTheLastAttempt() async throws {
        try await Self.withServer([503, 503, 503, 503, 503]) { store, log in
            await #expect(throws: StoreError.http(location: "s3://courses/c", operation: "PUT manifest.json", status: 503, code: "SlowDown", message: "scripted")) {
                try await store.put("manifest.json", data: Data("{}".utf8), metadata: Self.metadata)
            }
            #expect(log().count == 4)
        }
    }

    @Test func aRefusalIsNotRetried() async throws {
        try await Self.withServer([403]) { store, log in
            await #expect(throws: StoreError.self) {
                try await store.put("manifest.json", data: Data("{}".utf8), metadata: Self.metadata)
            }
            #expect(log() == ["PUT /courses/c/manifest.json"])
        }
    }
}
