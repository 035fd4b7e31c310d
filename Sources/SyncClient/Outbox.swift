import Diagnostics
import FileSystem
import Foundation
import Manifest

/// An answer a learner gave offline, waiting to reach the LMS.
public struct AnswerEntry: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        /// Not sent yet, or sent and not answered (a network error, a 5xx): sent again later.
        case pending
        /// Being sent: found in this state after a crash, it is sent again (see `Outbox`).
        case sending
        /// The LMS graded it; `result` holds its answer.
        case sent
        /// The block changed since the answer was given: held, never sent.
        case conflict
        /// The LMS refused it for good (past due, no attempts left); `message` says why.
        case rejected
    }

    public var id: String
    public var usageID: String
    /// The block's `content_hash` the learner answered; nil when the host could not tell.
    public var contentHash: String?
    /// ISO 8601 with milliseconds, UTC: the order answers are sent in.
    public var timestamp: String
    /// CAPA field names to values; checkbox fields (`…[]`) carry several values.
    public var fields: [String: [String]]
    public var state: State
    public var attempts: Int
    /// The LMS's JSON answer (`problem_check`), for the page to show.
    public var result: String?
    public var message: String?
    /// What the LMS's submissions endpoint answered for it; nil when it went through
    /// `problem_check` (then `result` holds the grade) or was not answered yet.
    public var lmsResult: LMSResult?
    /// Not sent again before this time (ISO 8601): the LMS's `retry_after` for it.
    public var notBefore: String?

    public init(id: String, usageID: String, contentHash: String?, timestamp: String, fields: [String: [String]]) {
        self.id = id
        self.usageID = usageID
        self.contentHash = contentHash
        self.timestamp = timestamp
        self.fields = fields
        self.state = .pending
        self.attempts = 0
    }

    enum CodingKeys: String, CodingKey {
        case id, timestamp, fields, state, attempts, result, message
        case lmsResult = "lms_result"
        case notBefore = "not_before"
        case usageID = "usage_id"
        case contentHash = "content_hash"
    }
}

public enum OutboxError: Error, Equatable, CustomStringConvertible {
    case unwritable(path: String, reason: String)
    case invalidAnswer(String)
    /// The journal holds as many answers or bytes as its quota allows: nothing more is kept
    /// until it is sent, so a page that posts without end cannot fill the disk.
    case full(path: String, reason: String)

    public var description: String {
        switch self {
        case .unwritable(let path, let reason): return "\(path): cannot record the answer: \(reason)"
        case .invalidAnswer(let reason): return "the answer cannot be kept: \(reason)"
        case .full(let path, let reason): return "\(path): the outbox is full: \(reason)"
        }
    }
}

/// Answers given offline, kept in an append-only journal (`outbox.jsonl`): each line records an
/// answer or a change of its state and is synced to disk before the call returns, so nothing
/// acknowledged is lost to a crash or a power cut; a line cut short by one, or damaged, is
/// skipped when the journal is read, costing that record only. An append-only file rather than SQLite: a few records a day per learner,
/// no query beyond "in timestamp order", and no library for an app to link.
///
/// Sending is at least once: an answer is marked `sending` before its request, so one whose
/// outcome a crash lost is sent again. For `problem_check` that is safe: the same answer is
/// graded the same way and the LMS keeps the latest submission (it costs an attempt where the
/// problem limits them, which is why nothing is sent twice except after such a crash).
public struct Outbox: Sendable {
    public static let fileName = "outbox.jsonl"
    public let path: String

    public init(folder: String) {
        path = folder + "/" + Self.fileName
    }

    struct Record: Codable {
        var entry: AnswerEntry
    }

    /// Every answer in its latest state, in timestamp order (ties by id).
    public func entries() -> [AnswerEntry] {
        guard let data = WholeFile.readIfUsable(path, atMost: WholeFile.stateLimit) else { return [] }
        return Self.latest(in: data).entries
    }

    /// Each answer's latest record in `journal`'s lines, in timestamp order, and how many lines
    /// there were: a line cut short by a crash, or damaged, costs that record only.
    static func latest<Bytes: Collection>(in journal: Bytes) -> (entries: [AnswerEntry], records: Int) where Bytes.Element == UInt8 {
        var latest: [String: AnswerEntry] = [:]
        var records = 0
        let decoder = JSONDecoder()
        for line in journal.split(separator: UInt8(ascii: "\n")) {
            records += 1
            guard let record = try? decoder.decode(Record.self, from: Data(line)) else { continue }
            latest[record.entry.id] = record.entry
        }
        return (inTimeOrder(Array(latest.values)), records)
    }

    /// Records a new answer. Its id must be new; fields must name CAPA inputs; the journal must
    /// have room for it under `quota`. Reads the whole journal once to know its ids: a host that
    /// records many answers keeps an `Index` instead (see `add(_:quota:index:)`).
    public func add(_ entry: AnswerEntry, quota: Quota = .standard) throws(OutboxError) {
        var index = Index()
        try add(entry, quota: quota, index: &index)
    }

    /// Records a new answer, reading only what was appended to the journal since `index` last
    /// looked (by this host or another process), so a POST costs its own line, not the journal.
    public func add(_ entry: AnswerEntry, quota: Quota = .standard, index: inout Index) throws(OutboxError) {
        try Self.check(entry)
        var fresh = entry
        fresh.state = .pending
        let line = try Self.line(for: fresh, path: path)
        var journal = try Journal.locked(path: path)
        defer { journal.close() }
        index.catchUp(on: journal, size: journal.size())
        let over = index.ids.count + 1 > quota.entries || journal.size() + Int64(line.count) + 1 > quota.bytes
        if over, try compact(journal, keepingSettled: quota.settledKept) {
            // The compacted journal is a new file: append to it, not to the one just replaced.
            journal.close()
            journal = try Journal.locked(path: path)
            index.catchUp(on: journal, size: journal.size())
        }
        let size = journal.size()
        guard !index.ids.contains(entry.id) else { throw .invalidAnswer("answer \(entry.id) is recorded already") }
        if index.ids.count + 1 > quota.entries {
            throw .full(path: path, reason: "it holds \(index.ids.count) answers, its limit of \(quota.entries); no more are kept in it")
        }
        if size + Int64(line.count) + 1 > quota.bytes {
            throw .full(path: path, reason: "\(size) bytes, and this answer would take it over its limit of \(quota.bytes) bytes")
        }
        try journal.append(line, path: path)
        index.ids.insert(entry.id)
        index.scanned = journal.size()
    }

    /// Records a change of state.
    public func update(_ entry: AnswerEntry) throws(OutboxError) {
        let line = try Self.line(for: entry, path: path)
        let journal = try Journal.locked(path: path)
        defer { journal.close() }
        try journal.append(line, path: path)
    }

    /// Rewrites the journal with each answer's latest record only, dropping settled answers past
    /// the newest `keepingSettled`. Returns whether it changed anything. Safe beside hosts that
    /// append at the same time: it holds the journal's lock, and they reopen a replaced journal.
    @discardableResult
    public func compact(keepingSettled: Int = Quota.standard.settledKept) throws(OutboxError) -> Bool {
        guard access(path, F_OK) == 0 else { return false }
        let journal = try Journal.locked(path: path)
        defer { journal.close() }
        return try compact(journal, keepingSettled: keepingSettled)
    }

    private func compact(_ journal: Journal, keepingSettled: Int) throws(OutboxError) -> Bool {
        let (ordered, records) = Self.latest(in: journal.readAll())
        let settled = ordered.filter { $0.state != .pending && $0.state != .sending }
        let dropped = Set(settled.dropLast(max(keepingSettled, 0)).map(\.id))
        let kept = ordered.filter { !dropped.contains($0.id) }
        guard kept.count < records else { return false }
        var text: [UInt8] = []
        for entry in kept { text += try Self.line(for: entry, path: path) }
        do {
            try DurableFile.replace(path, with: text)
        } catch {
            throw .unwritable(path: path, reason: "cannot compact: \(error)")
        }
        return true
    }

    static func inTimeOrder(_ entries: [AnswerEntry]) -> [AnswerEntry] {
        // By instant, not by text: `add` takes any ISO 8601 form (with or without milliseconds,
        // any offset), whose strings do not sort as their times do.
        let dated = entries.map { (Self.parseTimestamp($0.timestamp) ?? .distantPast, $0) }
        return dated.sorted { ($0.0, $0.1.timestamp, $0.1.id) < ($1.0, $1.1.timestamp, $1.1.id) }.map(\.1)
    }

    static func check(_ entry: AnswerEntry) throws(OutboxError) {
        guard !entry.usageID.isEmpty, !entry.fields.isEmpty else { throw .invalidAnswer("no block or no fields") }
        guard entry.fields.keys.allSatisfy({ $0.hasPrefix("input_") }) else {
            throw .invalidAnswer("field names must be CAPA input names (input_…)")
        }
        guard Self.parseTimestamp(entry.timestamp) != nil else { throw .invalidAnswer("timestamp \(entry.timestamp) is not ISO 8601") }
    }

    static func line(for entry: AnswerEntry, path: String) throws(OutboxError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let line = try? encoder.encode(Record(entry: entry)) else { throw .unwritable(path: path, reason: "cannot encode") }
        return [UInt8](line) + [UInt8(ascii: "\n")]
    }

    public static func parseTimestamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

extension OutboxError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .unwritable: return .outboxUnwritable
        case .invalidAnswer: return .invalidAnswer
        case .full: return .outboxFull
        }
    }
}
