import Foundation
import Manifest
import Testing
import TestSupport

@testable import SyncClient

/// The outbox journal on a real disk, without an LMS: what is recorded is read back, in order,
/// and survives a crash's torn line or a damaged one.
@Suite struct OutboxJournalTests {
    func answer(
        _ id: String, at time: String = "2026-11-23T09:00:00.000Z", block: String = "quiz", fields: [String: [String]] = ["input_quiz_2_1": ["choice_0"]]
    ) -> AnswerEntry {
        AnswerEntry(id: id, usageID: Fixture.usageID(block, type: "problem"), contentHash: Fixture.digest(1), timestamp: time, fields: fields)
    }

    func freshOutbox() -> Outbox { Outbox(folder: TestSupport.temporaryFolder("outbox") + "/state") }

    func lines(_ outbox: Outbox) -> [String] {
        String(decoding: TestSupport.read(outbox.path), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func anAnswerIsReadBackAsRecordedAndPending() throws {
        let outbox = freshOutbox()
        #expect(outbox.entries() == [])
        var given = answer("a1", fields: ["input_quiz_2_1": ["choice_0"], "input_quiz_3_1[]": ["choice_1", "choice_2"]])
        given.state = .sent
        given.attempts = 3
        try outbox.add(given)
        var expected = given
        expected.state = .pending
        expected.attempts = 3
        #expect(outbox.entries() == [expected], "a new answer is pending whatever state it came with")
        // Another value over the same folder (another process) sees the same journal.
        #expect(Outbox(folder: (outbox.path as NSString).deletingLastPathComponent).entries() == [expected])
        #expect(lines(outbox).count == 2 && lines(outbox).last == "", "one record, one line, newline-terminated")
    }

    @Test func answersAreOnlyReadableByTheirOwner() throws {
        let outbox = freshOutbox()
        try outbox.add(answer("a1"))
        let attributes = try FileManager.default.attributesOfItem(atPath: outbox.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func answersComeBackInTimestampOrderTiesById() throws {
        let outbox = freshOutbox()
        for (id, time) in [("c", "2026-11-23T09:00:02.000Z"), ("b", "2026-11-23T09:00:01.000Z"), ("a", "2026-11-23T09:00:02.000Z")] {
            try outbox.add(answer(id, at: time))
        }
        #expect(outbox.entries().map(\.id) == ["b", "a", "c"])
    }

    /// `add` takes any ISO 8601 time (the page sends milliseconds in UTC, a host may not), and the
    /// journal promises the order the answers were given in.
    @Test func answersComeBackInTimeOrderWhateverTheirISO8601Form() throws {
        let outbox = freshOutbox()
        try outbox.add(answer("later", at: "2026-11-23T09:00:00.500Z"))
        try outbox.add(answer("earlier", at: "2026-11-23T09:00:00Z"))
        try outbox.add(answer("earliest", at: "2026-11-23T10:59:59.000+02:00"))
        #expect(outbox.entries().map(\.id) == ["earliest", "earlier", "later"])
    }

    @Test func aChangeOfStateReplacesTheAnswerWithoutAddingOne() throws {
        let outbox = freshOutbox()
        try outbox.add(answer("a1"))
        try outbox.add(answer("a2", at: "2026-11-23T09:00:01.000Z"))
        var sent = try #require(outbox.entries().first)
        sent.state = .sending
        sent.attempts = 1
        try outbox.update(sent)
        sent.state = .sent
        sent.result = #"{"success": "correct"}"#
        try outbox.update(sent)
        let entries = outbox.entries()
        #expect(entries.map(\.id) == ["a1", "a2"])
        #expect(entries.map(\.state) == [.sent, .pending])
        #expect(entries.first?.result == #"{"success": "correct"}"# && entries.first?.attempts == 1)
        #expect(lines(outbox).count == 5, "an append-only journal: four records")
    }

    @Test func anAnswerIdIsRecordedOnce() throws {
        let outbox = freshOutbox()
        try outbox.add(answer("a1"))
        #expect(throws: OutboxError.invalidAnswer("answer a1 is recorded already")) { try outbox.add(answer("a1", at: "2026-11-23T09:05:00.000Z")) }
        #expect(outbox.entries().count == 1)
    }

    @Test(arguments: [
        (AnswerEntry(id: "x", usageID: "", contentHash: nil, timestamp: "2026-11-23T09:00:00Z", fields: ["input_q_2_1": ["a"]]), "no block or no fields"),
        (AnswerEntry(id: "x", usageID: "block-v1:O+N+r+type@problem+block@q", contentHash: nil, timestamp: "2026-11-23T09:00:00Z", fields: [:]), "no block or no fields"),
        (AnswerEntry(id: "x", usageID: "block-v1:O+N+r+type@problem+block@q", contentHash: nil, timestamp: "2026-11-23T09:00:00Z", fields: ["answer": ["a"]]),
         "field names must be CAPA input names (input_…)"),
        (AnswerEntry(id: "x", usageID: "block-v1:O+N+r+type@problem+block@q", contentHash: nil, timestamp: "yesterday", fields: ["input_q_2_1": ["a"]]),
         "timestamp yesterday is not ISO 8601"),
        (AnswerEntry(id: "x", usageID: "block-v1:O+N+r+type@problem+block@q", contentHash: nil, timestamp: "2026-11-23 09:00:00", fields: ["input_q_2_1": ["a"]]),
         "timestamp 2026-11-23 09:00:00 is not ISO 8601"),
    ])
    func anAnswerThatCannotBeSentIsRefusedAndNothingIsWritten(entry: AnswerEntry, reason: String) {
        let outbox = freshOutbox()
        #expect(throws: OutboxError.invalidAnswer(reason)) { try outbox.add(entry) }
        #expect(!FileManager.default.fileExists(atPath: outbox.path))
    }

    /// A crash during a write leaves the last line cut short: the answers before it are intact,
    /// and the next answer recorded is not glued onto the torn line and lost with it.
    @Test func aTornLastLineIsIgnoredAndTheNextAnswerIsKept() throws {
        let outbox = freshOutbox()
        try outbox.add(answer("a1"))
        try outbox.add(answer("a2", at: "2026-11-23T09:00:01.000Z"))
        let whole = TestSupport.read(outbox.path)
        let secondLine = try #require(whole.dropLast().lastIndex(of: UInt8(ascii: "\n"))) + 1
        try TestSupport.writeBytes(Array(whole[..<(secondLine + 20)]), to: outbox.path)
        #expect(outbox.entries().map(\.id) == ["a1"])

        try outbox.add(answer("a3", at: "2026-11-23T09:00:02.000Z"))
        #expect(outbox.entries().map(\.id) == ["a1", "a3"])
        var sent = try #require(outbox.entries().last)
        sent.state = .sent
        try outbox.update(sent)
        #expect(outbox.entries().map(\.state) == [.pending, .sent])
    }

    /// A damaged line in the middle (a bad sector, a hand edit) costs that record only: it is
    /// skipped, and every answer before and after it is read.
    @Test func aCorruptLineInTheMiddleIsSkippedAndTheRestIsRead() throws {
        let outbox = freshOutbox()
        for (index, id) in ["a1", "a2", "a3"].enumerated() { try outbox.add(answer(id, at: "2026-11-23T09:00:0\(index).000Z")) }
        var journal = lines(outbox)
        journal[1] = "{\"entry\": garbage" + String(repeating: "\u{0}", count: 8)
        try TestSupport.write(["outbox.jsonl": journal.joined(separator: "\n")], under: (outbox.path as NSString).deletingLastPathComponent)
        #expect(outbox.entries().map(\.id) == ["a1", "a3"])
        try outbox.add(answer("a4", at: "2026-11-23T09:00:09.000Z"))
        #expect(outbox.entries().map(\.id) == ["a1", "a3", "a4"])
    }

    @Test func emptyLinesAndAnEmptyJournalReadAsNothing() throws {
        let outbox = freshOutbox()
        try TestSupport.write(["outbox.jsonl": "\n\n"], under: (outbox.path as NSString).deletingLastPathComponent)
        #expect(outbox.entries() == [])
        try outbox.add(answer("a1"))
        #expect(outbox.entries().map(\.id) == ["a1"])
    }

    /// The journal is opened without following links: a link planted in the state folder cannot
    /// make the client write answers elsewhere.
    @Test func aLinkInPlaceOfTheJournalIsRefused() throws {
        let outbox = freshOutbox()
        let folder = (outbox.path as NSString).deletingLastPathComponent
        let elsewhere = TestSupport.temporaryFolder("elsewhere") + "/file"
        try TestSupport.write(["file": ""], under: (elsewhere as NSString).deletingLastPathComponent)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: outbox.path, withDestinationPath: elsewhere)
        #expect(throws: OutboxError.self) { try outbox.add(answer("a1")) }
        #expect(TestSupport.read(elsewhere).isEmpty)
    }

    /// A quota in entries and in bytes: the answer over it is refused as `full`, nothing is
    /// written, and a change of state (the sync marking one sent) is still recorded.
    @Test func anAnswerOverTheQuotaIsRefusedAsFullAndNothingIsWritten() throws {
        let outbox = freshOutbox()
        let small = Outbox.Quota(bytes: 1 << 20, entries: 3)
        for index in 0..<3 { try outbox.add(answer("a\(index)", at: "2026-11-23T09:00:0\(index).000Z"), quota: small) }
        let before = TestSupport.read(outbox.path)
        let error = try #require(throws: OutboxError.self) { try outbox.add(answer("a3"), quota: small) }
        guard case .full(let path, let reason) = error else { Issue.record("\(error)"); return }
        #expect(path == outbox.path && reason.contains("3 answers"), "\(reason)")
        #expect(TestSupport.read(outbox.path) == before)
        var sent = try #require(outbox.entries().first)
        sent.state = .sent
        try outbox.update(sent)

        let bytes = freshOutbox()
        let tight = Outbox.Quota(bytes: 600, entries: 100)
        try bytes.add(answer("b0"), quota: tight)
        #expect(throws: OutboxError.self) {
            try bytes.add(answer("b1", fields: ["input_quiz_2_1": [String(repeating: "x", count: 400)]]), quota: tight)
        }
        #expect(bytes.entries().map(\.id) == ["b0"])
    }

    /// Years of use must not fill the quota for good: a full journal is compacted (each answer's
    /// latest record, the newest settled answers) to make room, and a pending answer is never
    /// what gives way.
    @Test func aFullJournalOfSettledAnswersMakesRoomAndNeverDropsAPendingOne() throws {
        let outbox = freshOutbox()
        let quota = Outbox.Quota(bytes: 1 << 20, entries: 4, settledKept: 1)
        for index in 0..<4 { try outbox.add(answer("a\(index)", at: "2026-11-23T09:00:0\(index).000Z"), quota: quota) }
        // Full of pending answers: nothing may give way.
        #expect(throws: OutboxError.self) { try outbox.add(answer("refused", at: "2026-11-23T09:00:09.000Z"), quota: quota) }
        for var entry in outbox.entries().prefix(3) {
            entry.state = .sent
            entry.result = "{\"success\":\"correct\"}"
            try outbox.update(entry)
        }
        #expect(lines(outbox).count == 8)  // 4 answers, 3 updates, and the final newline
        try outbox.add(answer("a4", at: "2026-11-23T09:00:04.000Z"), quota: quota)
        let kept = outbox.entries()
        // a0 and a1 were the oldest settled answers; a2 is the newest one kept; a3 waits to be sent.
        #expect(kept.map(\.id) == ["a2", "a3", "a4"])
        #expect(kept.map(\.state) == [.sent, .pending, .pending])
        #expect(kept.first?.result == "{\"success\":\"correct\"}")
        #expect(lines(outbox).count == 4)

        // A host that keeps an index finds the replaced journal and still appends to the live one.
        var index = Outbox.Index()
        try outbox.add(answer("a5", at: "2026-11-23T09:00:05.000Z"), quota: Outbox.Quota(bytes: 1 << 20, entries: 100), index: &index)
        #expect(try outbox.compact(keepingSettled: 0))
        try outbox.add(answer("a6", at: "2026-11-23T09:00:06.000Z"), quota: Outbox.Quota(bytes: 1 << 20, entries: 100), index: &index)
        #expect(outbox.entries().map(\.id) == ["a3", "a4", "a5", "a6"])
        #expect(try !outbox.compact(keepingSettled: 0))
    }

    /// A host keeping an index reads only what was appended since it last looked: what another
    /// process appends is seen (its ids stay unique), what was read before is not read again.
    @Test func anIndexReadsOnlyWhatWasAppendedSince() throws {
        let outbox = freshOutbox()
        var index = Outbox.Index()
        try outbox.add(answer("mine-1"), index: &index)
        // Another process (another `answers --add`, the sync) appends meanwhile.
        let other = Outbox(folder: (outbox.path as NSString).deletingLastPathComponent)
        try other.add(answer("theirs", at: "2026-11-23T09:00:01.000Z"))
        #expect(throws: OutboxError.invalidAnswer("answer theirs is recorded already")) { try outbox.add(answer("theirs"), index: &index) }
        #expect(index.count == 2)
        // Records read once are not read again: overwriting the first one in place (same
        // length) goes unseen by the index, which a full reread would have noticed.
        var bytes = TestSupport.read(outbox.path)
        let name = Array("mine-1".utf8)
        let offset = try #require(bytes.indices.first { bytes[$0...].starts(with: name) })
        bytes.replaceSubrange(offset..<(offset + name.count), with: Array("mine-X".utf8))
        // Data.write without .atomic rewrites the same file (same inode), as a bad sector would.
        try Data(bytes).write(to: URL(fileURLWithPath: outbox.path))
        try outbox.add(answer("mine-2", at: "2026-11-23T09:00:02.000Z"), index: &index)
        #expect(throws: OutboxError.invalidAnswer("answer mine-1 is recorded already")) { try outbox.add(answer("mine-1"), index: &index) }
        // A journal replaced (another file at the path) is read again from its start.
        try FileManager.default.removeItem(atPath: outbox.path)
        try outbox.add(answer("mine-1"), index: &index)
        #expect(outbox.entries().map(\.id) == ["mine-1"])
    }
}
