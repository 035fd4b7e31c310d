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
        case usageID = "usage_id"
        case contentHash = "content_hash"
    }
}

public enum OutboxError: Error, Equatable, CustomStringConvertible {
    case unwritable(path: String, reason: String)
    case invalidAnswer(String)

    public var description: String {
        switch self {
        case .unwritable(let path, let reason): return "\(path): cannot record the answer: \(reason)"
        case .invalidAnswer(let reason): return "the answer cannot be kept: \(reason)"
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
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        var latest: [String: AnswerEntry] = [:]
        let decoder = JSONDecoder()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let record = try? decoder.decode(Record.self, from: Data(line)) else { continue }
            latest[record.entry.id] = record.entry
        }
        // By instant, not by text: `add` takes any ISO 8601 form (with or without milliseconds,
        // any offset), whose strings do not sort as their times do.
        let dated = latest.values.map { (Self.parseTimestamp($0.timestamp) ?? .distantPast, $0) }
        return dated.sorted { ($0.0, $0.1.timestamp, $0.1.id) < ($1.0, $1.1.timestamp, $1.1.id) }.map(\.1)
    }

    /// Records a new answer. Its id must be new; fields must name CAPA inputs.
    public func add(_ entry: AnswerEntry) throws(OutboxError) {
        guard !entry.usageID.isEmpty, !entry.fields.isEmpty else { throw .invalidAnswer("no block or no fields") }
        guard entry.fields.keys.allSatisfy({ $0.hasPrefix("input_") }) else {
            throw .invalidAnswer("field names must be CAPA input names (input_…)")
        }
        guard Self.parseTimestamp(entry.timestamp) != nil else { throw .invalidAnswer("timestamp \(entry.timestamp) is not ISO 8601") }
        guard !entries().contains(where: { $0.id == entry.id }) else { throw .invalidAnswer("answer \(entry.id) is recorded already") }
        var fresh = entry
        fresh.state = .pending
        try append(fresh)
    }

    /// Records a change of state.
    public func update(_ entry: AnswerEntry) throws(OutboxError) {
        try append(entry)
    }

    private func append(_ entry: AnswerEntry) throws(OutboxError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(Record(entry: entry)) else { throw .unwritable(path: path, reason: "cannot encode") }
        line.append(UInt8(ascii: "\n"))
        let folder = DurableFile.folder(of: path)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let existed = access(path, F_OK) == 0
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        // A crash may have cut the last record short: start on a line of its own, or this
        // record would be glued to the torn one and ignored with it.
        var info = stat()
        var last: UInt8 = 0
        if fstat(fd, &info) == 0, info.st_size > 0, pread(fd, &last, 1, info.st_size - 1) == 1, last != UInt8(ascii: "\n") {
            line.insert(UInt8(ascii: "\n"), at: 0)
        }
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == line.count, fsync(fd) == 0 else {
            throw .unwritable(path: path, reason: String(cString: strerror(errno)))
        }
        if !existed { try? DurableFile.syncFolder(folder) }
    }

    static func parseTimestamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
