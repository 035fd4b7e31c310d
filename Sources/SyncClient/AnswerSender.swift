import Diagnostics
import FileSystem
import Foundation
import Manifest
import SafeText

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

    /// A token file is read up to this many bytes: a token is a line, not a file's worth.
    static let fileLimit = 64 << 10

    /// `COURSEPACK_LMS_TOKEN` or `COURSEPACK_LMS_COOKIE`, or the first line of `file` (a line
    /// starting with `Cookie:` is a session cookie, anything else a bearer token). `warn` hears
    /// of a token file other users may read.
    public static func load(
        file: String?, environment: [String: String] = ProcessInfo.processInfo.environment, warn: (String) -> Void = { _ in }
    ) throws(SyncError) -> LMSCredential? {
        if let file {
            let line = try firstLine(of: file, warn: warn)
            let credential: LMSCredential
            if line.lowercased().hasPrefix("cookie:") {
                credential = .sessionCookie(String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces))
            } else {
                credential = .bearer(line.hasPrefix("Bearer ") ? String(line.dropFirst(7)) : line)
            }
            try credential.check(source: file)
            return credential
        }
        if let token = environment["COURSEPACK_LMS_TOKEN"], !token.isEmpty {
            try LMSCredential.bearer(token).check(source: "COURSEPACK_LMS_TOKEN")
            return .bearer(token)
        }
        if let cookie = environment["COURSEPACK_LMS_COOKIE"], !cookie.isEmpty {
            try LMSCredential.sessionCookie(cookie).check(source: "COURSEPACK_LMS_COOKIE")
            return .sessionCookie(cookie)
        }
        return nil
    }

    /// Read through one descriptor, so the mode checked is the file's read. Writable by group or
    /// others: refused (anyone could swap in their own account). Readable by them: a warning, as
    /// a device with one user often has umask 022 files and refusing would stop its uploads.
    static func firstLine(of file: String, warn: (String) -> Void) throws(SyncError) -> String {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .local(path: file, reason: "cannot read the token file: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .local(path: file, reason: "cannot read the token file") }
        if (info.st_mode & S_IFMT) == S_IFREG {
            guard info.st_mode & 0o022 == 0 else {
                throw .local(path: file, reason: "other users may write this token file; refusing it (chmod 600 \(file))")
            }
            if info.st_mode & 0o044 != 0 { warn("warning: \(file): other users may read this token file (chmod 600 \(file))") }
        }
        var bytes = [UInt8](repeating: 0, count: fileLimit)
        var count = 0
        while count < fileLimit {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, fileLimit - count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        let text = String(decoding: bytes.prefix(count), as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).first.map({ String($0).trimmingCharacters(in: .whitespaces) }), !line.isEmpty else {
            throw .local(path: file, reason: "holds no token")
        }
        return line
    }

    /// A header value with a control character could end the header and start another.
    func check(source: String) throws(SyncError) {
        let value: String
        switch self {
        case .bearer(let token): value = token
        case .sessionCookie(let cookie): value = cookie
        }
        guard !value.isEmpty, value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) else {
            throw .local(path: source, reason: "the credential holds control characters or non-ASCII text; refusing it")
        }
    }
}

/// Sends the outbox's answers to the LMS's own `problem_check` handler, one block at a time, each
/// block's answers in timestamp order, checking first that the block has not changed since.
///
/// Every request goes to `origin` only and follows no redirect; each answer carries its entry id
/// as `Idempotency-Key`, the same on every try, so an LMS (or a proxy in front of it) can drop
/// the repeat that a crash between sending and marking causes. Only what a page shows is kept
/// of the LMS's answer, cleaned of control characters.
public struct AnswerSender: Sendable {
    public struct Summary: Sendable, Equatable {
        public var sent = 0
        public var conflicts = 0
        public var rejected = 0
        /// Left pending for a later flush (network errors, 5xx, redirects, or sending stopped).
        public var kept = 0
        /// The LMS answered 401 or 403: sending stopped; the learner must sign in again.
        public var signInRequired = false
        /// Why sending stopped (the LMS unreachable, a redirect), cleaned for printing.
        public var stopReason: String?
        /// The LMS has no submissions endpoint (404): answers went to `problem_check` one by one.
        public var usedProblemCheck = false
        /// Answers not sent in this run because the LMS asked for a pause (`retry_after`), and
        /// the later answers of their blocks; counted in `kept` too.
        public var waiting = 0
        /// The LMS's message when it says the learner is not enrolled in the course (a 403
        /// `not_enrolled` to a batch): every answer is kept, to send once the learner is again.
        public var notEnrolled: String?

        public init() {}
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case outbox(OutboxError)
        /// An id that would go into a URL is not an opaque key of the course; nothing was sent.
        case invalidKey(OpaqueKey.Invalid)

        public var description: String {
            switch self {
            case .outbox(let error): return "\(error)"
            case .invalidKey(let error): return "the course's manifest is refused: \(error)"
            }
        }
    }

    public let origin: LMSOrigin
    public let courseID: String
    public let credential: LMSCredential?
    public let timeout: TimeInterval

    public init(origin: LMSOrigin, courseID: String, credential: LMSCredential?, timeout: TimeInterval = 30) {
        self.origin = origin
        self.courseID = courseID
        self.credential = credential
        self.timeout = timeout
    }

    /// Where CAPA grades an answer: the problem block's `problem_check` handler, the course and
    /// usage ids each one percent-encoded path segment.
    public func handlerURL(for usageID: String) -> URL? {
        URL(string: "\(origin.base)/courses/\(OpaqueKey.pathSegment(courseID))/xblock/\(OpaqueKey.pathSegment(usageID))/handler/xmodule_handler/problem_check")
    }

    /// The course id and the usage id of every answer to send, checked before any request.
    func checkKeys(of waiting: [AnswerEntry], current: [String: String?]) throws(Failure) {
        do {
            let course = try OpaqueKey.course(courseID)
            for entry in waiting where current[entry.usageID] != nil {
                try OpaqueKey.checkUsage(entry.usageID, of: course, courseID: courseID)
            }
        } catch {
            throw .invalidKey(error)
        }
    }

    /// Sends what is pending: through the LMS's submissions endpoint when it has one, else to
    /// `problem_check`. `server` is the course's current manifest: an answer given on a block
    /// whose `content_hash` has changed since is held as a conflict, never sent. The caller holds
    /// the target's lock: reading, sending and marking must not interleave with another flush.
    public func flush(_ outbox: Outbox, server: CourseManifest) async throws(Failure) -> Summary {
        var summary = Summary()
        let current = Dictionary(server.blocks.map { ($0.usageID, $0.contentHash) }, uniquingKeysWith: { a, _ in a })
        let waiting = outbox.entries().filter { $0.state == .pending || $0.state == .sending }
        try checkKeys(of: waiting, current: current)
        var ready: [AnswerEntry] = []
        for entry in waiting {
            if try !hold(entry, current: current[entry.usageID], outbox: outbox, summary: &summary) { ready.append(entry) }
        }
        // An answer the LMS asked to retry later waits for its time, and its block's later ones with it.
        let now = Date()
        let paused = Set(ready.filter { $0.notBefore.flatMap(Outbox.parseTimestamp).map { $0 > now } ?? false }.map(\.usageID))
        summary.waiting = ready.filter { paused.contains($0.usageID) }.count
        summary.kept += summary.waiting
        ready = ready.filter { !paused.contains($0.usageID) }
        let versions = current.compactMapValues { $0 }
        guard try await !flushInBatches(ready, versions: versions, outbox: outbox, summary: &summary) else { return summary }
        summary.usedProblemCheck = true
        let left = Set(outbox.entries().filter { $0.state == .pending || $0.state == .sending }.map(\.id))
        try await flushOneByOne(ready.filter { left.contains($0.id) }, outbox: outbox, summary: &summary)
        return summary
    }

    /// Sends to `problem_check`, one block at a time, each block's answers in timestamp order.
    private func flushOneByOne(_ waiting: [AnswerEntry], outbox: Outbox, summary: inout Summary) async throws(Failure) {
        var blocksInOrder: [String] = []
        for entry in waiting where !blocksInOrder.contains(entry.usageID) { blocksInOrder.append(entry.usageID) }
        for block in blocksInOrder {
            let answers = waiting.filter { $0.usageID == block }
            for (index, entry) in answers.enumerated() {
                if summary.stopReason != nil || summary.signInRequired {
                    summary.kept += 1
                    continue
                }
                let done = try await settle(entry, outbox: outbox, summary: &summary)
                // Later answers of a block wait for its earlier ones, so they reach the LMS in order.
                if done.state == .pending && summary.stopReason == nil && !summary.signInRequired {
                    summary.kept += answers.count - index - 1
                    break
                }
            }
        }
    }

    /// Records the answer as a conflict, and returns true, when its block is gone or changed.
    /// `current`: the block's hash in the server's manifest (nil: the block is gone; `.some(nil)`:
    /// it has none).
    private func hold(_ original: AnswerEntry, current: String??, outbox: Outbox, summary: inout Summary) throws(Failure) -> Bool {
        var entry = original
        if current == nil {
            entry.message = "the block is no longer in the course"
        } else if let answered = entry.contentHash, let hash = current, answered != hash {
            entry.message = "the problem changed since this answer was given; it was not sent"
        } else {
            return false
        }
        entry.state = .conflict
        do { try outbox.update(entry) } catch { throw .outbox(error) }
        summary.conflicts += 1
        return true
    }

    /// Sends one answer to `problem_check` and records what the LMS made of it.
    private func settle(_ original: AnswerEntry, outbox: Outbox, summary: inout Summary) async throws(Failure) -> AnswerEntry {
        var entry = original
        do {
            entry.state = .sending
            entry.attempts += 1
            try outbox.update(entry)
            record(await post(entry), in: &entry, summary: &summary)
            try outbox.update(entry)
            return entry
        } catch {
            throw .outbox(error)
        }
    }

    /// What the LMS's answer makes of the entry.
    private func record(_ outcome: LMSRequest.Outcome, in entry: inout AnswerEntry, summary: inout Summary) {
        switch outcome {
        case .answered(200...299, let body, false) where Self.refusal(in: body) != nil:
            entry.state = .rejected
            entry.message = Self.refusal(in: body)
            summary.rejected += 1
        case .answered(200...299, let body, let truncated):
            entry.state = .sent
            entry.result = truncated ? nil : Self.result(from: body)
            entry.message = truncated ? "graded; the LMS's answer (over \(LMSRequest.bodyLimit / 1024) KiB, or packed) was not kept" : nil
            summary.sent += 1
        case .answered(let status, let body, _) where (400...499).contains(status) && status != 401 && status != 403:
            entry.state = .rejected
            entry.message = Self.message(from: body)
            summary.rejected += 1
        default:
            let keeping = Self.keeping(outcome, batch: false)
            entry.state = .pending
            entry.message = keeping.message
            summary.kept += 1
            summary.signInRequired = summary.signInRequired || keeping.signInRequired
            summary.stopReason = summary.stopReason ?? keeping.stopReason
        }
    }

    static func redirectReason(status: Int, location: String) -> String {
        let target = location.isEmpty ? "" : " to \(RemoteText.clean(location, limit: 200))"
        return "the LMS answered HTTP \(status), a redirect\(target); redirects are never followed (check --lms-url)"
    }

    public enum CompletionOutcome: Sendable, Equatable {
        case sent
        /// Kept for a later try: the LMS could not be reached, answered 5xx or redirected.
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
        guard let url = URL(string: "\(origin.base)/api/completion/v1/completion-batch") else { return .refused("the LMS URL is not valid") }
        let body: [String: Any] = ["username": username, "course_key": courseID, "blocks": Dictionary(uniqueKeysWithValues: blocks.map { ($0, 1.0) })]
        guard let data = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) else { return .refused("cannot encode") }
        switch await send(url: url, body: data, contentType: "application/json", idempotencyKey: nil) {
        case .answered(200...299, _, _): return .sent
        case .answered(401, _, _), .answered(403, _, _): return .signInRequired
        case .answered(400...499, let body, _): return .refused(Self.message(from: body))
        case .answered(let status, _, _): return .kept("the LMS answered HTTP \(status)")
        case .redirected(let status, let location): return .kept(Self.redirectReason(status: status, location: location))
        case .failed(let reason): return .kept(RemoteText.clean(reason))
        }
    }

    /// The LMS's own words: `{"error": …}`, `{"success": …}` or `{"message": …}`, else the body;
    /// bounded and without control characters.
    static func message(from body: Data) -> String {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            for key in ["error", "message", "success", "detail"] {
                if let text = object[key] as? String, !RemoteText.clean(text).isEmpty { return RemoteText.clean(text) }
            }
        }
        let cleaned = RemoteText.clean(String(decoding: body.prefix(4096), as: UTF8.self)).trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? "no reason given" : cleaned
    }

    /// The grades problem_check gives, as the LMS's own problem script reads them; any other
    /// `success` is a refusal in an HTTP 200 (a closed or past-due problem, no attempts left,
    /// a submission too soon, input it cannot read), which its page shows as an alert.
    static let grades: Set<String> = ["correct", "incorrect", "submitted"]

    /// The LMS's message when a 2xx answer to problem_check is a refusal; nil for a grade, or a
    /// body that is not problem_check's JSON (kept as sent, as before).
    static func refusal(in body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let success = object["success"] as? String, !grades.contains(RemoteText.clean(success).trimmingCharacters(in: .whitespaces))
        else { return nil }
        return message(from: body)
    }

    /// What a page shows of a graded answer: `success`, `current_score` and `total_possible`.
    /// The rest (`contents` is the problem's whole HTML) is not kept.
    struct Grade: Codable {
        var success: String?
        var currentScore: Double?
        var totalPossible: Double?

        enum CodingKeys: String, CodingKey {
            case success
            case currentScore = "current_score"
            case totalPossible = "total_possible"
        }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            success = (try? container.decodeIfPresent(String.self, forKey: .success)).flatMap { $0 }.map { RemoteText.clean($0, limit: 100) }
            currentScore = (try? container.decodeIfPresent(Double.self, forKey: .currentScore)).flatMap { $0 }.flatMap { $0.isFinite ? $0 : nil }
            totalPossible = (try? container.decodeIfPresent(Double.self, forKey: .totalPossible)).flatMap { $0 }.flatMap { $0.isFinite ? $0 : nil }
        }
    }

    static func result(from body: Data) -> String? {
        guard let grade = try? JSONDecoder().decode(Grade.self, from: body),
            grade.success != nil || grade.currentScore != nil || grade.totalPossible != nil
        else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(grade)).map { String(decoding: $0, as: UTF8.self) }
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

    /// The entry's id when it is a plain token, else its SHA-256: a page chooses ids, and a
    /// header value must not carry what could end the header.
    public static func idempotencyKey(for id: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:+@".unicodeScalars)
        if !id.isEmpty, id.unicodeScalars.count <= 200, id.unicodeScalars.allSatisfy(plain.contains) { return id }
        return "sha256-" + SHA256Hex.of(Array(id.utf8))
    }

    private func post(_ entry: AnswerEntry) async -> LMSRequest.Outcome {
        guard let url = handlerURL(for: entry.usageID) else { return .failed("the LMS URL is not valid") }
        return await send(
            url: url, body: Self.formBody(entry.fields), contentType: "application/x-www-form-urlencoded; charset=UTF-8",
            idempotencyKey: Self.idempotencyKey(for: entry.id))
    }

    func send(
        url: URL, body: Data, contentType: String, idempotencyKey: String?, bodyLimit: Int = LMSRequest.bodyLimit
    ) async -> LMSRequest.Outcome {
        var headers = ["Content-Type": contentType, "Accept": "application/json", "X-Requested-With": "XMLHttpRequest"]
        if let idempotencyKey { headers["Idempotency-Key"] = idempotencyKey }
        switch credential {
        case .bearer(let token):
            headers["Authorization"] = "Bearer " + token
        case .sessionCookie(let cookie):
            headers["Cookie"] = cookie
            // Django checks a session's POST against its CSRF cookie and the referring origin.
            if let csrf = cookie.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { $0.hasPrefix("csrftoken=") }) {
                headers["X-CSRFToken"] = String(csrf.dropFirst("csrftoken=".count))
            }
            headers["Referer"] = origin.base + "/"
        case nil:
            break
        }
        return await LMSRequest(origin: origin, timeout: timeout, bodyLimit: bodyLimit).post(url, body: body, headers: headers)
    }
}

extension AnswerSender.Failure: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .outbox(let error): return error.diagnosticID
        case .invalidKey(let error): return error.diagnosticID
        }
    }
}
