import Foundation
import SafeText

/// Sending the learner events recorded offline through the plugin's events endpoint, in
/// batches of at most 100, each event settled by its own result. An LMS without the plugin
/// answers 404: its events stay in their (bounded) journal, unsent; the blocks opened offline
/// still reach it as completions.
extension AnswerSender {
    public struct EventSummary: Sendable, Equatable {
        public var accepted = 0
        public var refused = 0
        /// Left pending: a `retry`, a request that decided nothing, or held behind one of these.
        public var kept = 0
        /// Pending events not sent in this run because the LMS asked for a pause (`retry_after`).
        public var waiting = 0
        /// Pending events dropped unsent, ever, to keep the journal within its quota.
        public var dropped = 0
        public var requests = 0
        /// The LMS has no events endpoint (404): nothing was sent.
        public var noEndpoint = false
        public var signInRequired = false
        /// The LMS's message when it says the learner is not enrolled in the course (403).
        public var notEnrolled: String?
        public var stopReason: String?
        /// What the LMS added to the device's times (its `clock_offset_seconds`), last answer.
        public var clockOffset: Double?

        public init() {}
    }

    public func eventsURL() -> URL? {
        URL(string: "\(origin.base)/api/coursepack/v1/courses/\(OpaqueKey.pathSegment(courseID))/events")
    }

    /// Sends what is pending and due, oldest first, then drops the events the LMS took from the
    /// journal. A block's later events wait behind one kept, so the LMS sees each block's events
    /// in order. The caller holds the target's lock.
    public func flushEvents(_ outbox: EventOutbox, now: Date = Date(), batchSize: Int = 100) async throws(Failure) -> EventSummary {
        var summary = EventSummary()
        let contents = outbox.contents()
        summary.dropped = contents.dropped
        let pending = contents.events.filter { $0.state == .pending }
        let due = pending.filter { event in event.notBefore.flatMap(Outbox.parseTimestamp).map { $0 <= now } ?? true }
        summary.waiting = pending.count - due.count
        let dueIDs = Set(due.map(\.id))
        var heldBack = Set(pending.filter { !dueIDs.contains($0.id) }.compactMap(\.usageID))
        var left = due[...]
        var size = max(1, min(batchSize, EventBatch.itemLimit))
        while !left.isEmpty {
            let (ready, waiting) = (left.filter { !Self.isHeld($0, heldBack) }, left.filter { Self.isHeld($0, heldBack) })
            summary.kept += waiting.count
            guard !ready.isEmpty else { break }
            let batch = EventBatch(events: Array(ready.prefix(size)))
            summary.requests += 1
            let outcome = await post(batch)
            switch outcome {
            case .answered(404, _, _):
                summary.noEndpoint = true
                summary.kept += ready.count
                return summary
            case .answered(413, _, _) where batch.events.count > 1:
                size = max(1, batch.events.count / 2)
                left = ready[...]
                continue
            case .answered(200...299, let body, false) where batch.results(in: body) != nil:
                let answer = batch.results(in: body)
                summary.clockOffset = answer?.clockOffset ?? summary.clockOffset
                let settled = settle(batch.events, with: answer?.results ?? [:], now: now, summary: &summary)
                do { try outbox.update(settled) } catch { throw .outbox(error) }
                for event in settled where event.state == .pending { if let block = event.usageID { heldBack.insert(block) } }
            default:
                summary.kept += ready.count
                stopEvents(outcome, summary: &summary)
                return summary
            }
            left = ready.dropFirst(batch.events.count)
        }
        do { try outbox.compact() } catch { throw .outbox(error) }
        return summary
    }

    static func isHeld(_ event: EventEntry, _ heldBack: Set<String>) -> Bool {
        event.usageID.map(heldBack.contains) ?? false
    }

    private func post(_ batch: EventBatch) async -> LMSRequest.Outcome {
        guard let url = eventsURL(), let body = batch.body() else { return .failed("the LMS URL is not valid") }
        return await send(url: url, body: body, contentType: "application/json", idempotencyKey: nil, bodyLimit: LMSRequest.batchBodyLimit)
    }

    /// Each event in the state its result leaves it in: `accepted` → sent, `refused` → kept as
    /// history, `retry` or no result → pending, not sent again before `retry_after`.
    func settle(_ events: [EventEntry], with results: [String: EventBatch.Result], now: Date, summary: inout EventSummary) -> [EventEntry] {
        events.map { original in
            var event = original
            event.attempts += 1
            let result = results[SubmissionBatch.itemID(for: event.id)]
            switch result?.status {
            case "accepted", "graded":
                event.state = .sent
                event.message = nil
                summary.accepted += 1
            case "refused":
                event.state = .refused
                event.message = [result?.reason, result?.message].compactMap { $0 }.joined(separator: ": ")
                summary.refused += 1
            default:
                event.state = .pending
                event.message = "not decided: \(result?.message ?? "the LMS gave no result for it"); kept for the next try"
                event.notBefore = result?.retryAfter.map { EventBatch.iso(now.addingTimeInterval($0)) }
                summary.kept += 1
            }
            return event
        }
    }

    /// A whole request that decided nothing: why the events stay, and whether to stop.
    func stopEvents(_ outcome: LMSRequest.Outcome, summary: inout EventSummary) {
        if case .answered(403, let body, _) = outcome, let refusal = Self.notEnrolled(in: body) {
            summary.notEnrolled = refusal
            return
        }
        let keeping = Self.keeping(outcome, batch: true)
        summary.signInRequired = keeping.signInRequired
        if !keeping.signInRequired { summary.stopReason = keeping.stopReason ?? keeping.message }
    }

    /// The LMS's message when a 403 says the learner is not enrolled in the course (the plugin's
    /// `{"error": "not_enrolled", …}`), as opposed to a refusal of the credentials.
    static func notEnrolled(in body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], object["error"] as? String == "not_enrolled" else {
            return nil
        }
        return RemoteText.clean(object["message"] as? String ?? "not enrolled", limit: 500)
    }
}
