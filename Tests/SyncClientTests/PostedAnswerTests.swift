import Foundation
import Manifest
import Testing
import TestSupport

@testable import SyncClient

/// The body a page posts, turned into an outbox entry against the installed manifest.
@Suite struct PostedAnswerTests {
    let installed = Fixture.manifest([Fixture.block("quiz", type: "problem", version: 4), Fixture.block("notes")])

    @Test func aPostedAnswerIsStampedWithTheInstalledBlocksContentHash() throws {
        let body = #"""
            {"usage_id": "\#(Fixture.usageID("quiz", type: "problem"))", "timestamp": "2026-11-23T09:00:00.123Z",
             "fields": {"input_quiz_2_1": "choice_1", "input_quiz_3_1[]": ["choice_0", "choice_2"]}}
            """#
        let entry = try PostedAnswer.entry(from: Data(body.utf8), installed: installed)
        #expect(entry.usageID == Fixture.usageID("quiz", type: "problem"))
        #expect(entry.contentHash == Fixture.digest(1004))
        #expect(entry.timestamp == "2026-11-23T09:00:00.123Z")
        #expect(entry.fields == ["input_quiz_2_1": ["choice_1"], "input_quiz_3_1[]": ["choice_0", "choice_2"]])
        #expect(entry.state == .pending && entry.attempts == 0)
        #expect(entry.id.hasPrefix("2026-11-23T09:00:00.123Z-quiz-"), "a generated id says when and where: \(entry.id)")
        let again = try PostedAnswer.entry(from: Data(body.utf8), installed: installed)
        #expect(again.id != entry.id, "two posts of the same answer are two answers")
    }

    @Test func anIdAndAContentHashThePageGivesAreKept() throws {
        let body = #"""
            {"usage_id": "\#(Fixture.usageID("quiz", type: "problem"))", "timestamp": "2026-11-23T09:00:00Z", "fields": {"input_quiz_2_1": "x"},
             "id": "page-42", "content_hash": "abc"}
            """#
        let entry = try PostedAnswer.entry(from: Data(body.utf8), installed: installed)
        #expect(entry.id == "page-42" && entry.contentHash == "abc")
    }

    @Test func anAnswerForABlockNotInstalledIsRefused() {
        let body = #"{"usage_id": "block-v1:O+N+r+type@problem+block@other", "timestamp": "2026-11-23T09:00:00Z", "fields": {"input_other_2_1": "x"}}"#
        #expect(throws: OutboxError.invalidAnswer("block block-v1:O+N+r+type@problem+block@other is not installed here")) {
            try PostedAnswer.entry(from: Data(body.utf8), installed: installed)
        }
    }

    @Test func anAnswerForABlockListedOnlineOnlyIsRefused() {
        let listing = Fixture.manifest([Fixture.block("quiz", type: "problem"), Fixture.onlineOnly("chat")])
        let body = #"{"usage_id": "\#(Fixture.usageID("chat", type: "discussion"))", "timestamp": "2026-11-23T09:00:00Z", "fields": {"input_chat_2_1": "x"}}"#
        #expect(throws: OutboxError.invalidAnswer("block \(Fixture.usageID("chat", type: "discussion")) is online only here (discussions need the network): it has no offline page to answer it")) {
            try PostedAnswer.entry(from: Data(body.utf8), installed: listing)
        }
    }

    @Test(arguments: [
        "", "[]", #"{"timestamp": "t", "fields": {}}"#, #"{"usage_id": "u", "fields": {}}"#, #"{"usage_id": "u", "timestamp": "t"}"#,
        #"{"usage_id": "u", "timestamp": "t", "fields": {"input_a": 3}}"#, #"{"usage_id": "u", "timestamp": "t", "fields": {"input_a": [1]}}"#,
    ])
    func aBodyThatIsNoAnswerIsRefused(body: String) throws {
        let error = try #require(throws: OutboxError.self) { try PostedAnswer.entry(from: Data(body.utf8), installed: installed) }
        guard case .invalidAnswer(let reason) = error else { Issue.record("\(error)"); return }
        #expect(reason.hasPrefix("not an answer object {usage_id, timestamp, fields}: "))
    }

    /// What the page posts goes through the same checks as any answer when it is recorded.
    @Test func aPostedAnswerIsRecordedInTheOutbox() throws {
        let body = #"{"usage_id": "\#(Fixture.usageID("quiz", type: "problem"))", "timestamp": "2026-11-23T09:00:00.000Z", "fields": {"input_quiz_2_1": "choice_1"}}"#
        let outbox = Outbox(folder: TestSupport.temporaryFolder("posted"))
        let entry = try PostedAnswer.entry(from: Data(body.utf8), installed: installed)
        try outbox.add(entry)
        #expect(outbox.entries() == [entry])
        let bad = #"{"usage_id": "\#(Fixture.usageID("notes"))", "timestamp": "2026-11-23T09:00:00.000Z", "fields": {"answer": "x"}}"#
        #expect(throws: OutboxError.invalidAnswer("field names must be CAPA input names (input_…)")) {
            try outbox.add(try PostedAnswer.entry(from: Data(bad.utf8), installed: installed))
        }
    }

    /// What one answer may hold is bounded before it is kept: fields, values per field, value
    /// and name lengths, ids.
    @Test(arguments: [
        (#""fields": {\#((0..<101).map { "\"input_quiz_\($0)_1\": \"x\"" }.joined(separator: ", "))}"#, "101 fields, over the limit of 100"),
        (#""fields": {"input_quiz_2_1": [\#((0..<101).map { _ in "\"x\"" }.joined(separator: ", "))]}"#, "field input_quiz_2_1 has 101 values, over the limit of 100"),
        (#""fields": {"input_quiz_2_1": "\#(String(repeating: "x", count: 10_001))"}"#, "a value of field input_quiz_2_1 is 10001 bytes long, over the limit of 10000"),
        (#""fields": {"input_\#(String(repeating: "n", count: 300))": "x"}"#, "a field name is 306 bytes long, over the limit of 256"),
        (#""fields": {"input_quiz_2_1": "x"}, "id": "\#(String(repeating: "i", count: 1_001))""#, "id is 1001 bytes long, over the limit of 1000"),
    ])
    func anAnswerOverItsLimitsIsRefused(fields: String, reason: String) {
        let body = #"{"usage_id": "\#(Fixture.usageID("quiz", type: "problem"))", "timestamp": "2026-11-23T09:00:00.000Z", \#(fields)}"#
        #expect(throws: OutboxError.invalidAnswer(reason)) { try PostedAnswer.entry(from: Data(body.utf8), installed: installed) }
    }

    /// A host that makes its own ids (`serve`) ignores one the page gives.
    @Test func aHostCanIgnoreTheIdAPageGives() throws {
        let body = #"{"usage_id": "\#(Fixture.usageID("quiz", type: "problem"))", "timestamp": "2026-11-23T09:00:00Z", "fields": {"input_quiz_2_1": "x"}, "id": "page-42"}"#
        let entry = try PostedAnswer.entry(from: Data(body.utf8), installed: installed, keepingID: false)
        #expect(entry.id != "page-42" && entry.id.hasPrefix("2026-11-23T09:00:00Z-quiz-"), "\(entry.id)")
    }
}
