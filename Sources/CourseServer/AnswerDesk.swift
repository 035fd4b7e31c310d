import ClientTarget
import Foundation
import Hummingbird
import Synchronization
import SyncClient

/// Takes the answers pages post to `CourseServer.answersPath`. Only serve's own pages can: each
/// POST must carry the run's secret, be JSON, come from serve's own origin (when the browser
/// says where it comes from) and stay under a size limit read as the body arrives. Each answer
/// is appended to its course's outbox under the outbox's quota, with an id serve makes itself,
/// reading only the journal's new bytes (an `Outbox.Index` per course, kept for the run).
final class AnswerDesk: Sendable {
    let target: ClientTarget
    let secret: ServeSecret
    let host: ServedHost
    let limits: CourseServer.Limits
    private let indexes = Mutex<[String: Outbox.Index]>([:])

    init(target: ClientTarget, secret: ServeSecret, host: ServedHost, limits: CourseServer.Limits) {
        self.target = target
        self.secret = secret
        self.host = host
        self.limits = limits
    }

    func answer(_ request: Request) async -> Response {
        if let refusal = refusal(of: request) { return CourseServer.json(refusal.status, ["error": refusal.reason]) }
        let body: ByteBuffer
        do {
            body = try await Self.collect(request, upTo: limits.answerBytes, within: limits.bodySeconds)
        } catch let error as BodyError {
            return CourseServer.json(error.status, ["error": error.reason])
        } catch {
            return CourseServer.json(.badRequest, ["error": "the answer could not be read: \(error)"])
        }
        return record(Data(body.readableBytesView))
    }

    /// Why a POST is refused before its body is read, or nil.
    func refusal(of request: Request) -> (status: HTTPResponse.Status, reason: String)? {
        Self.refusal(of: request, secret: secret, host: host, limit: limits.answerBytes, what: "an answer", whats: "answers")
    }

    /// The checks every POST from a served page passes (answers and events): from serve's own
    /// page (`strangerRefusal`), JSON, and a declared size within `limit`. `what`/`whats` name
    /// what is posted, for the messages.
    static func refusal(
        of request: Request, secret: ServeSecret, host: ServedHost, limit: Int, what: String, whats: String
    ) -> (status: HTTPResponse.Status, reason: String)? {
        if let refusal = strangerRefusal(of: request, secret: secret, host: host, what: "\(whats) are taken") { return refusal }
        let headers = request.headers
        let type = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else { return (.unsupportedMediaType, "\(what) is sent as application/json") }
        if let length = headers[.contentLength], (Int(length) ?? Int.max) > limit {
            return (.contentTooLarge, "\(what) is at most \(limit) bytes")
        }
        return nil
    }

    /// The latest state of the block `?usage_id=` names (`BlockState`), for the problem page
    /// to show: `{usage_id, state}`, state null when it has no answer. Asked for like an answer
    /// is posted, with the run's secret from serve's own page: a learner's answers and grades are
    /// not for other sites' pages to read.
    func state(_ request: Request) -> Response {
        if let refusal = strangerRefusal(of: request, what: "answer states are given") {
            return CourseServer.json(refusal.status, ["error": refusal.reason])
        }
        guard let usageID = request.uri.queryParameters["usage_id"].map(String.init), !usageID.isEmpty, usageID.utf8.count <= 1_000 else {
            return CourseServer.json(.badRequest, ["error": "name the block: ?usage_id=ID"])
        }
        let found: BlockState??
        do {
            found = try AnswerStateFiles.state(of: usageID, in: target)
        } catch {
            return CourseServer.json(.internalServerError, ["error": "\(error)"])
        }
        guard let state = found else { return CourseServer.json(.notFound, ["error": "no block with this id is installed"]) }
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        headers[CourseServer.FieldName("X-Content-Type-Options")!] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: BlockState.json(usageID: usageID, state: state))))
    }

    /// Refuses a request that is not from one of serve's own pages: another site's (its
    /// `Sec-Fetch-Site` or `Origin` says so), or one without the run's secret.
    func strangerRefusal(of request: Request, what: String) -> (status: HTTPResponse.Status, reason: String)? {
        Self.strangerRefusal(of: request, secret: secret, host: host, what: what)
    }

    static func strangerRefusal(
        of request: Request, secret: ServeSecret, host: ServedHost, what: String
    ) -> (status: HTTPResponse.Status, reason: String)? {
        let headers = request.headers
        if let site = headers[CourseServer.FieldName("Sec-Fetch-Site")!], site.lowercased() != "same-origin" {
            return (.forbidden, "\(what) from this server's own pages only (Sec-Fetch-Site: \(site))")
        }
        if let origin = headers[.origin], !host.accepts(origin: origin, authority: request.head.authority) {
            return (.forbidden, "\(what) from this server's own pages only (Origin: \(origin))")
        }
        guard secret.matches(headers[CourseServer.FieldName(ServeSecret.headerName)!]) else {
            return (.forbidden, "the page's secret is missing or wrong: reload the page from this server")
        }
        return nil
    }

    func record(_ data: Data) -> Response {
        let placed: (entry: AnswerEntry, outbox: Outbox)
        do {
            placed = try target.placeAnswer(data, keepingID: false)
        } catch {
            return CourseServer.json(.badRequest, ["error": "\(error)"])
        }
        let quota = limits.outbox
        let outcome: Result<Void, OutboxError> = indexes.withLock { indexes in
            var index = indexes[placed.outbox.path] ?? Outbox.Index()
            defer { indexes[placed.outbox.path] = index }
            return Result { () throws(OutboxError) in try placed.outbox.add(placed.entry, quota: quota, index: &index) }
        }
        switch outcome {
        case .success:
            // For the page opened from file:// later. Best effort: the answer is kept, and the
            // file is made again from the outbox by the next `answers --add`, sync or submit.
            try? AnswerStateFiles.write(placed.entry, besides: placed.outbox)
            return CourseServer.json(.created, ["id": placed.entry.id, "usage_id": placed.entry.usageID])
        case .failure(.full(_, let reason)): return CourseServer.json(CourseServer.insufficientStorage, ["error": "this course's outbox is full: \(reason)"])
        case .failure(.invalidAnswer(let reason)): return CourseServer.json(.badRequest, ["error": reason])
        case .failure(let error): return CourseServer.json(.internalServerError, ["error": "\(error)"])
        }
    }

    struct BodyError: Error {
        let status: HTTPResponse.Status
        let reason: String
    }

    /// The body, refused as soon as it grows past `limit` and when it has not all arrived
    /// within `seconds` (a body sent a byte at a time would hold the connection open).
    static func collect(_ request: Request, upTo limit: Int, within seconds: Double, what: String = "an answer") async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                var collected = ByteBuffer()
                for try await part in request.body {
                    guard collected.readableBytes + part.readableBytes <= limit else {
                        throw BodyError(status: .contentTooLarge, reason: "\(what) is at most \(limit) bytes")
                    }
                    var part = part
                    collected.writeBuffer(&part)
                }
                return collected
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let body = first else {
                throw BodyError(status: .requestTimeout, reason: "\(what) did not arrive within \(Int(seconds)) s")
            }
            return body
        }
    }
}

/// Routes `CourseServer.statePath` to the desk before the file guards, which would answer it
/// as a missing file.
struct AnswerStateRoute<Context: RequestContext>: RouterMiddleware {
    let desk: AnswerDesk

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path == CourseServer.statePath else { return try await next(request, context) }
        guard request.method == .get else { return CourseServer.json(.methodNotAllowed, ["error": "the answer state is read with GET"]) }
        return desk.state(request)
    }
}
