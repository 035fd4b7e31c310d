import FileSystem
import Foundation

/// A learner event recorded offline (a page view, a video played or paused, a problem
/// checked), waiting to reach the LMS's tracking log through the plugin's events endpoint.
public struct EventEntry: Codable, Sendable, Equatable {
    public enum State: String, Codable, Sendable {
        /// Not sent yet, or sent and not decided (a network error, a 5xx, a `retry`).
        case pending
        /// The LMS took it (`accepted`): dropped at the next compaction.
        case sent
        /// The LMS refused it for good (`refused`): kept as history, never sent again.
        case refused
    }

    public var id: String
    /// A tracking-log event name (`play_video`, `page_view`, …).
    public var name: String
    /// The block the event is about; nil for a page view of the outline.
    public var usageID: String?
    /// ISO 8601 with milliseconds: when the learner did it, by the device's clock.
    public var timestamp: String
    /// The event's payload, as the LMS's own page would send it.
    public var data: JSONValue
    public var state: State = .pending
    public var attempts = 0
    public var message: String?
    /// Not sent again before this time (ISO 8601): the LMS's `retry_after` for it or its batch.
    public var notBefore: String?

    public init(id: String, name: String, usageID: String?, timestamp: String, data: JSONValue) {
        self.id = id
        self.name = name
        self.usageID = usageID
        self.timestamp = timestamp
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case id, name, timestamp, data, state, attempts, message
        case usageID = "usage_id"
        case notBefore = "not_before"
    }
}

/// The learner events a page recorded, in one bounded journal per course (`events.jsonl` beside
/// the answers' `outbox.jsonl`), written the way the answers' journal is (each line one record,
/// synced before the call returns, a torn line costing that record only).
///
/// Events are many and each is worth little: the journal is bounded in count and bytes, and when
/// a new event would pass either bound, the journal is compacted: events already sent go first,
/// then refused ones, then the oldest pending ones. Each pending event dropped unsent is counted
/// in the journal (`{"dropped": N}`, its first line after a compaction). Answers live in their
/// own journal, which this one never touches: no event can push out an answer.
public struct EventOutbox: Sendable {
    public static let fileName = "events.jsonl"
    public let path: String

    public init(folder: String) {
        path = folder + "/" + Self.fileName
    }

    public struct Quota: Sendable, Equatable {
        public var bytes: Int64
        public var entries: Int

        public init(bytes: Int64, entries: Int) {
            self.bytes = bytes
            self.entries = entries
        }

        /// Weeks of events for one learner: a record is about 300 bytes.
        public static let standard = Quota(bytes: 4 << 20, entries: 10_000)
    }

    /// What the journal holds: each event's latest record in timestamp order, and how many
    /// events were dropped unsent to keep it within its quota.
    public struct Contents: Sendable, Equatable {
        public var events: [EventEntry]
        public var dropped: Int
    }

    /// Each event's latest record, or the count of one compaction.
    struct Record: Codable {
        var entry: EventEntry?
        var dropped: Int?
    }

    public func contents() -> Contents {
        guard let data = WholeFile.readIfUsable(path, atMost: WholeFile.stateLimit) else { return Contents(events: [], dropped: 0) }
        return Self.contents(of: data).contents
    }

    static func contents<Bytes: Collection>(of journal: Bytes) -> (contents: Contents, records: Int) where Bytes.Element == UInt8 {
        var latest: [String: EventEntry] = [:]
        var dropped = 0
        var records = 0
        let decoder = JSONDecoder()
        for line in journal.split(separator: UInt8(ascii: "\n")) {
            records += 1
            guard let record = try? decoder.decode(Record.self, from: Data(line)) else { continue }
            if let entry = record.entry { latest[entry.id] = entry }
            if let count = record.dropped { dropped = max(dropped, count) }
        }
        let dated = latest.values.map { (Outbox.parseTimestamp($0.timestamp) ?? .distantPast, $0) }
        let ordered = dated.sorted { ($0.0, $0.1.id) < ($1.0, $1.1.id) }.map(\.1)
        return (Contents(events: ordered, dropped: dropped), records)
    }

    /// Records new events (their state made `pending`); returns how many pending events were
    /// dropped to make room for them. Reads only what was appended since `index` last looked,
    /// except when the journal is full and must be compacted.
    @discardableResult
    public func add(_ events: [EventEntry], quota: Quota = .standard, index: inout Outbox.Index) throws(OutboxError) -> Int {
        guard !events.isEmpty else { return 0 }
        var lines: [UInt8] = []
        for var event in events.suffix(max(quota.entries, 0)) {
            event.state = .pending
            event.attempts = 0
            lines += try line(Record(entry: event))
        }
        var journal = try Outbox.Journal.locked(path: path)
        defer { journal.close() }
        index.catchUp(on: journal, size: journal.size())
        let incoming = min(events.count, quota.entries)
        var dropped = 0
        if index.count + incoming > quota.entries || journal.size() + Int64(lines.count) > quota.bytes {
            dropped = try compact(journal, room: (incoming, Int64(lines.count)), quota: quota)
            journal.close()
            journal = try Outbox.Journal.locked(path: path)
            index.catchUp(on: journal, size: journal.size())
        }
        guard journal.size() + Int64(lines.count) <= quota.bytes else {
            throw .full(path: path, reason: "these events (\(lines.count) bytes) do not fit in its limit of \(quota.bytes) bytes")
        }
        try journal.append(lines, path: path)
        index.scanned = journal.size()
        for event in events { index.ids.insert(event.id) }
        return dropped
    }

    /// Records changes of state, all in one write.
    public func update(_ events: [EventEntry]) throws(OutboxError) {
        guard !events.isEmpty else { return }
        var lines: [UInt8] = []
        for event in events { lines += try line(Record(entry: event)) }
        let journal = try Outbox.Journal.locked(path: path)
        defer { journal.close() }
        try journal.append(lines, path: path)
    }

    /// Rewrites the journal without the events the LMS took. Refused ones stay, as history.
    public func compact() throws(OutboxError) {
        guard access(path, F_OK) == 0 else { return }
        let journal = try Outbox.Journal.locked(path: path)
        defer { journal.close() }
        _ = try compact(journal, room: (0, 0), quota: Quota(bytes: .max, entries: .max))
    }

    /// Rewrites the journal so that `room` (events, bytes) more fit under `quota`: sent events
    /// go first, then refused ones, then the oldest pending ones. Returns the pending ones dropped.
    private func compact(_ journal: Outbox.Journal, room: (events: Int, bytes: Int64), quota: Quota) throws(OutboxError) -> Int {
        let (contents, records) = Self.contents(of: journal.readAll())
        var kept = contents.events.filter { $0.state != .sent }
        var lines = try kept.map { event throws(OutboxError) in try line(Record(entry: event)) }
        var bytes = lines.reduce(Int64(0)) { $0 + Int64($1.count) } + 32
        var droppedNow = 0
        func over() -> Bool { kept.count + room.events > quota.entries || bytes + room.bytes > quota.bytes }
        // Refused events first (history), then the oldest pending ones.
        for state in [EventEntry.State.refused, .pending] {
            var position = 0
            while over(), position < kept.count {
                guard kept[position].state == state else { position += 1; continue }
                bytes -= Int64(lines[position].count)
                if state == .pending { droppedNow += 1 }
                kept.remove(at: position)
                lines.remove(at: position)
            }
        }
        let dropped = contents.dropped + droppedNow
        guard kept.count + (dropped > 0 ? 1 : 0) < records else { return 0 }
        let text = (dropped > 0 ? try line(Record(entry: nil, dropped: dropped)) : []) + lines.joined()
        do {
            try DurableFile.replace(path, with: Array(text))
        } catch {
            throw .unwritable(path: path, reason: "cannot compact: \(error)")
        }
        return droppedNow
    }

    private func line(_ record: Record) throws(OutboxError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let line = try? encoder.encode(record) else { throw .unwritable(path: path, reason: "cannot encode an event") }
        return [UInt8](line) + [UInt8(ascii: "\n")]
    }
}
