import Foundation
import Manifest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the learner is signed in to the LMS: taken from a file or the environment, never from a
/// command-line value (which `ps` shows).
public enum LMSCredential: Sendable, Equatable {
    /// An OAuth2/JWT access token, sent as `Authorization: Bearer …`.
    case bearer(String)
    /// A browser session's cookies (`sessionid=…; csrftoken=…`), sent as `Cookie`, with the
    /// CSRF token Django requires for a POST.
    case sessionCookie(String)

    /// `COURSEPACK_LMS_TOKEN` or `COURSEPACK_LMS_COOKIE`, or the first line of `file` (a line
    /// starting with `Cookie:` is a session cookie, anything else a bearer token).
    public static func load(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(SyncError) -> LMSCredential? {
        if let file {
            guard let data = FileManager.default.contents(atPath: file),
                let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map({ String($0).trimmingCharacters(in: .whitespaces) }),
                !line.isEmpty
            else { throw .local(path: file, reason: "holds no token") }
            if line.lowercased().hasPrefix("cookie:") { return .sessionCookie(String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces)) }
            return .bearer(line.hasPrefix("Bearer ") ? String(line.dropFirst(7)) : line)
        }
        if let token = environment["COURSEPACK_LMS_TOKEN"], !token.isEmpty { return .bearer(token) }
        if let cookie = environment["COURSEPACK_LMS_COOKIE"], !cookie.isEmpty { return .sessionCookie(cookie) }
        return nil
    }
}

/// Sends the outbox's answers to the LMS's own `problem_check` handler, one block at a time, each
/// block's answers in timestamp order, checking first that the block has not changed since.
public struct AnswerSender: Sendable {
    public struct Summary: Sendable, Equatable {
        public var sent = 0
        public var conflicts = 0
        public var rejected = 0
        /// Left pending for a later flush (network errors, 5xx, or sending stopped).
        public var kept = 0
        /// The LMS answered 401 or 403: sending stopped; the learner must sign in again.
        public var signInRequired = false
    }

    public let lmsURL: String
    public let courseID: String
    public let credential: LMSCredential?
    public let timeout: TimeInterval

    public init(lmsURL: String, courseID: String, credential: LMSCredential?, timeout: TimeInterval = 30) {
        var base = lmsURL
        while base.hasSuffix("/") { base.removeLast() }
        self.lmsURL = base
        self.courseID = courseID
        self.credential = credential
        self.timeout = timeout
    }

    /// Where CAPA grades an answer: the problem block's `problem_check` handler.
    public func handlerURL(for usageID: String) -> URL? {
        URL(string: "\(lmsURL)/courses/\(courseID)/xblock/\(usageID)/handler/xmodule_handler/problem_check")
    }

    /// Sends what is pending. `server` is the course's current manifest: an answer given on a
    /// block whose `content_hash` has changed since is held as a conflict, never sent.
    public func flush(_ outbox: Outbox, server: CourseManifest) async throws(OutboxError) -> Summary {
        var summary = Summary()
        let current = Dictionary(server.blocks.map { ($0.usageID, $0.contentHash) }, uniquingKeysWith: { a, _ in a })
        let waiting = outbox.entries().filter { $0.state == .pending || $0.state == .sending }
        var blocksInOrder: [String] = []
        for entry in waiting where !blocksInOrder.contains(entry.usageID) { blocksInOrder.append(entry.usageID) }
        var stopAll = false
        for block in blocksInOrder {
            for var entry in waiting where entry.usageID == block {
                if stopAll {
                    summary.kept += 1
                    continue
                }
                guard let hash = current[block] else {
                    entry.state = .conflict
                    entry.message = "the block is no longer in the course"
                    try outbox.update(entry)
                    summary.conflicts += 1
                    continue
                }
                if let answered = entry.contentHash, answered != hash {
                    entry.state = .conflict
                    entry.message = "the problem changed since this answer was given; it was not sent"
                    try outbox.update(entry)
                    summary.conflicts += 1
                    continue
                }
                entry.state = .sending
                entry.attempts += 1
                try outbox.update(entry)
                let response = await post(entry)
                switch response {
                case .success(200...299, let body):
                    entry.state = .sent
                    entry.result = body
                    entry.message = nil
                    summary.sent += 1
                case .success(401, let body), .success(403, let body):
                    entry.state = .pending
                    entry.message = "sign in to the LMS again: " + Self.message(from: body)
                    summary.signInRequired = true
                    summary.kept += 1
                    stopAll = true
                case .success(400...499, let body):
                    entry.state = .rejected
                    entry.message = Self.message(from: body)
                    summary.rejected += 1
                case .success(let status, _):
                    entry.state = .pending
                    entry.message = "the LMS answered HTTP \(status); kept for the next try"
                    summary.kept += 1
                case .failure(let reason):
                    entry.state = .pending
                    entry.message = "not sent: \(reason); kept for the next try"
                    summary.kept += 1
                    stopAll = true  // the LMS cannot be reached: nothing else will get through now
                }
                try outbox.update(entry)
                // Later answers of a block wait for its earlier ones, so they reach the LMS in order.
                if entry.state == .pending && !stopAll {
                    let rest = waiting.drop { $0.id != entry.id }.dropFirst().filter { $0.usageID == block }.count
                    summary.kept += rest
                    break
                }
            }
        }
        return summary
    }

    public enum CompletionOutcome: Sendable, Equatable {
        case sent
        /// Kept for a later try: the LMS could not be reached or answered 5xx.
        case kept(String)
        /// 401 or 403: the learner must sign in again.
        case signInRequired
        /// Another 4xx: the LMS refused these completions; they are kept and shown.
        case refused(String)
    }

    /// Tells the LMS that `blocks` (opened offline) are complete, through its completion batch API,
    /// `POST {lms}/api/completion/v1/completion-batch` with `{username, course_key, blocks}`.
    public func sendCompletions(username: String, blocks: [String]) async -> CompletionOutcome {
        guard !blocks.isEmpty else { return .sent }
        guard let url = URL(string: "\(lmsURL)/api/completion/v1/completion-batch") else { return .refused("the LMS URL is not valid") }
        let body: [String: Any] = ["username": username, "course_key": courseID, "blocks": Dictionary(uniqueKeysWithValues: blocks.map { ($0, 1.0) })]
        guard let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) else { return .refused("cannot encode") }
        switch await send(url: url, body: data, contentType: "application/json") {
        case .success(200...299, _): return .sent
        case .success(401, _), .success(403, _): return .signInRequired
        case .success(400...499, let body): return .refused(Self.message(from: body))
        case .success(let status, _): return .kept("the LMS answered HTTP \(status)")
        case .failure(let reason): return .kept(reason)
        }
    }

    /// The LMS's own words: `{"error": …}`, `{"success": …}` or `{"message": …}`, else the body.
    static func message(from body: String) -> String {
        if let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] {
            for key in ["error", "message", "success", "detail"] {
                if let text = object[key] as? String, !text.isEmpty { return text }
            }
        }
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "no reason given" : String(trimmed.prefix(300))
    }

    enum Outcome: Sendable {
        case success(Int, String)
        case failure(String)
    }

    /// Form-encodes the fields as the LMS's problem form posts them (`input_x_2_1[]` once per value).
    static func formBody(_ fields: [String: [String]]) -> Data {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        func encode(_ text: String) -> String {
            (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: "%20", with: "+")
        }
        let pairs = fields.keys.sorted().flatMap { key in fields[key, default: []].map { encode(key) + "=" + encode($0) } }
        return Data(pairs.joined(separator: "&").utf8)
    }

    private func post(_ entry: AnswerEntry) async -> Outcome {
        guard let url = handlerURL(for: entry.usageID) else { return .failure("the LMS URL is not valid") }
        return await send(url: url, body: Self.formBody(entry.fields), contentType: "application/x-www-form-urlencoded; charset=UTF-8")
    }

    private func send(url: URL, body: Data, contentType: String) async -> Outcome {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("XMLHttpRequest", forHTTPHeaderField: "X-Requested-With")
        switch credential {
        case .bearer(let token):
            request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        case .sessionCookie(let cookie):
            request.setValue(cookie, forHTTPHeaderField: "Cookie")
            // Django checks a session's POST against its CSRF cookie and the referring origin.
            if let csrf = cookie.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { $0.hasPrefix("csrftoken=") }) {
                request.setValue(String(csrf.dropFirst("csrftoken=".count)), forHTTPHeaderField: "X-CSRFToken")
            }
            request.setValue(lmsURL + "/", forHTTPHeaderField: "Referer")
        case nil:
            break
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 2
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        return await withCheckedContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(error.localizedDescription))
                } else if let http = response as? HTTPURLResponse {
                    continuation.resume(returning: .success(http.statusCode, String(decoding: data ?? Data(), as: UTF8.self)))
                } else {
                    continuation.resume(returning: .failure("no HTTP response"))
                }
            }.resume()
        }
    }
}

extension SyncClient {
    public enum FlushError: Error, CustomStringConvertible {
        case server(SyncError)
        case outbox(OutboxError)

        public var description: String {
            switch self {
            case .server(let error): return "\(error)"
            case .outbox(let error): return "\(error)"
            }
        }
    }

    /// Sends this target's pending answers to the LMS, checked against the server's current
    /// manifest (fetched first), and returns what happened to them.
    public func flushOutbox(lmsURL: String, credential: LMSCredential?, timeout: TimeInterval = 30) async throws(FlushError) -> AnswerSender.Summary {
        let server: CourseManifest
        do { server = try await serverManifest() } catch { throw .server(error) }
        let sender = AnswerSender(lmsURL: lmsURL, courseID: server.courseID, credential: credential, timeout: timeout)
        do { return try await sender.flush(outbox, server: server) } catch { throw .outbox(error) }
    }
}
