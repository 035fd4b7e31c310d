import Foundation
import Testing
import TestSupport

@testable import SyncClient

/// The events journal's bound: what goes first when it is full, what is counted, and that a
/// journal read by JSONSerialization (an independent reader) holds what `contents()` says.
@Suite struct EventOutboxTests {
    static func event(_ second: Int, _ name: String = "play_video") -> EventEntry {
        EventEntry(
            id: "e\(second)", name: name, usageID: "block-v1:O+C+R+type@video+block@v", timestamp: String(format: "2026-11-23T09:00:%02d.000Z", second),
            data: .object(["currentTime": .number(Double(second)), "code": .string("html5")]))
    }

    func lines(_ outbox: EventOutbox) throws -> [[String: Any]] {
        let text = String(decoding: TestSupport.read(outbox.path), as: UTF8.self)
        return try text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func sentThenRefusedEventsGoBeforeAnyPendingOneAndDropsAreCounted() throws {
        let outbox = EventOutbox(folder: TestSupport.temporaryFolder("events"))
        let quota = EventOutbox.Quota(bytes: 1 << 20, entries: 4)
        var index = Outbox.Index()
        #expect(try outbox.add((0..<4).map { Self.event($0) }, quota: quota, index: &index) == 0)
        var settled = outbox.contents().events
        settled[0].state = .sent
        settled[1].state = .refused
        try outbox.update(Array(settled.prefix(2)))
        #expect(try outbox.add([Self.event(4)], quota: quota, index: &index) == 0, "the sent event made room")
        #expect(outbox.contents().events.map(\.id) == ["e1", "e2", "e3", "e4"])
        #expect(try outbox.add([Self.event(5)], quota: quota, index: &index) == 0, "then the refused one")
        #expect(outbox.contents().events.map(\.id) == ["e2", "e3", "e4", "e5"])
        #expect(try outbox.add([Self.event(6), Self.event(7)], quota: quota, index: &index) == 2, "then the oldest pending ones")
        #expect(outbox.contents() == EventOutbox.Contents(events: [4, 5, 6, 7].map { Self.event($0) }, dropped: 2))
        let written = try lines(outbox)
        #expect(written.first?["dropped"] as? Int == 2)
        let data = (written.last?["entry"] as? [String: Any])?["data"] as? [String: Any]
        #expect(data?["code"] as? String == "html5" && (data?["currentTime"] as? NSNumber)?.doubleValue == 7)
    }

    @Test func theByteBoundHoldsAndCompactionDropsWhatTheLMSTook() throws {
        let outbox = EventOutbox(folder: TestSupport.temporaryFolder("events"))
        var index = Outbox.Index()
        let quota = EventOutbox.Quota(bytes: 2_000, entries: 1_000)
        for second in 0..<40 { try outbox.add([Self.event(second)], quota: quota, index: &index) }
        #expect(TestSupport.read(outbox.path).count <= 2_000)
        let kept = outbox.contents()
        #expect(kept.dropped > 0 && kept.dropped + kept.events.count == 40 && kept.events.last?.id == "e39")
        var sent = kept.events
        for position in sent.indices { sent[position].state = .sent }
        try outbox.update(sent)
        try outbox.compact()
        #expect(outbox.contents() == EventOutbox.Contents(events: [], dropped: kept.dropped))
    }
}
