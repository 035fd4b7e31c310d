import Foundation
import SafeText

/// Sending through the LMS's submissions endpoint (the Open edX plugin): up to 100 answers a
/// request, each with a result of its own. An LMS without the plugin answers 404, and the
/// caller then sends what is left to `problem_check`, one by one.
extension AnswerSender {
    /// Where the plugin takes answers in batches.
    public func submissionsURL() -> URL? {
        URL(string: "\(origin.base)/api/coursepack/v1/courses/\(OpaqueKey.pathSegment(courseID))/submissions")
    }

    /// Why an answer stays pending after a request that decided nothing about it.
    struct Keeping {
        var message: String
        /// Set when nothing else will get through in this run either.
        var stopReason: String?
        var signInRequired = false
        /// The LMS says the learner is not enrolled in the course (403 `not_enrolled`).
        var notEnrolled: String?
    }

    /// Sends `ready` (oldest first) in batches. Returns false when the LMS has no submissions
    /// endpoint: nothing was decided, and the rest is for `problem_check`. Unlike a
    /// `problem_check`, an answer is not marked `sending` first: the LMS answers a repeated id
    /// with its first result, so one a crash left pending is sent again at no cost.
    func flushInBatches(_ ready: [AnswerEntry], versions: [String: String], outbox: Outbox, summary: inout Summary) async throws(Failure) -> Bool {
        var left = ready[...]
        var size = SubmissionBatch.itemLimit
        var heldBack: Set<String> = []
        while !left.isEmpty {
            // A block's later answers wait for one kept: the LMS must see them in order.
            let waiting = left.filter { heldBack.contains($0.usageID) }
            summary.kept += waiting.count
            left = left.filter { !heldBack.contains($0.usageID) }[...]
            if summary.stopReason != nil || summary.signInRequired || summary.notEnrolled != nil {
                summary.kept += left.count
                return true
            }
            guard !left.isEmpty else { break }
            let batch = SubmissionBatch(entries: Array(left.prefix(size)), versions: versions)
            switch await post(batch) {
            case .answered(404, _, _):
                return false
            case .answered(413, _, _) where batch.entries.count > 1, .answered(200...299, _, true) where batch.entries.count > 1:
                size = max(1, batch.entries.count / 2)  // too large to send, or its answer too large to read
                continue
            case .answered(200...299, let body, false) where batch.results(in: body) != nil:
                let results = batch.results(in: body) ?? [:]
                for entry in batch.entries {
                    let result = results[SubmissionBatch.itemID(for: entry.id)]
                    if try settle(entry, with: result, outbox: outbox, summary: &summary) == .pending { heldBack.insert(entry.usageID) }
                }
            case let outcome:
                try keep(batch.entries, Self.keeping(outcome, batch: true), outbox: outbox, summary: &summary)
            }
            left = left.dropFirst(batch.entries.count)
        }
        return true
    }

    private func post(_ batch: SubmissionBatch) async -> LMSRequest.Outcome {
        guard let url = submissionsURL(), let body = batch.body() else { return .failed("the LMS URL is not valid") }
        return await send(url: url, body: body, contentType: "application/json", idempotencyKey: nil, bodyLimit: LMSRequest.batchBodyLimit)
    }

    /// Records one item's result and returns the state it left the entry in. No result (the LMS
    /// skipped the id) or an unknown status keeps the answer for a later try.
    private func settle(_ original: AnswerEntry, with result: SubmissionBatch.Result?, outbox: Outbox, summary: inout Summary) throws(Failure) -> AnswerEntry.State {
        var entry = original
        entry.attempts += 1
        entry.lmsResult = result?.kept
        switch result?.status {
        case "graded", "accepted":
            entry.state = .sent
            entry.message = result?.held.map { held in result?.message ?? "held by the LMS: \(held)" }
            summary.sent += 1
        case "refused" where result?.kept.reason == "content_changed":
            // Answered on content the LMS no longer has: never graded against the new problem.
            entry.state = .conflict
            entry.message = "content_changed: the problem changed on the LMS after it was downloaded; sync to get the new version and answer again"
            summary.conflicts += 1
        case "refused":
            entry.state = .rejected
            entry.message = [result?.kept.reason, result?.message].compactMap { $0 }.joined(separator: ": ")
            summary.rejected += 1
        default:
            entry.state = .pending
            entry.message = "not decided: \(result?.message ?? "the LMS gave no result for it"); kept for the next try"
            entry.notBefore = result?.retryAfter.map { EventBatch.iso(Date().addingTimeInterval($0)) }
            summary.kept += 1
        }
        do { try outbox.update(entry) } catch { throw .outbox(error) }
        return entry.state
    }

    private func keep(_ entries: [AnswerEntry], _ keeping: Keeping, outbox: Outbox, summary: inout Summary) throws(Failure) {
        for var entry in entries {
            entry.state = .pending
            entry.attempts += 1
            entry.message = keeping.message
            do { try outbox.update(entry) } catch { throw .outbox(error) }
        }
        summary.kept += entries.count
        summary.signInRequired = summary.signInRequired || keeping.signInRequired
        summary.notEnrolled = summary.notEnrolled ?? keeping.notEnrolled
        if keeping.notEnrolled != nil { return }
        if !keeping.signInRequired { summary.stopReason = summary.stopReason ?? keeping.stopReason ?? keeping.message }
    }

    /// What an answer that decided nothing means for the answers it carried. In a batch, any
    /// refusal of the whole request keeps them: a 400 is a client bug, which must not cost the
    /// learner's answers.
    static func keeping(_ outcome: LMSRequest.Outcome, batch: Bool) -> Keeping {
        switch outcome {
        case .answered(403, let body, _) where batch && Self.notEnrolled(in: body) != nil:
            let message = Self.notEnrolled(in: body) ?? ""
            return Keeping(message: "not enrolled in the course: \(message); kept for the next try", stopReason: nil, notEnrolled: message)
        case .answered(let status, let body, _) where status == 401 || status == 403:
            return Keeping(message: "sign in to the LMS again: " + message(from: body), signInRequired: true)
        case .answered(200...299, _, _):
            return Keeping(message: "the LMS's answer could not be read; kept for the next try", stopReason: "the LMS's answer to a batch could not be read")
        case .answered(let status, let body, _) where batch && status < 500:
            let reason = "the LMS refused the batch with HTTP \(status): \(message(from: body))"
            return Keeping(message: reason + "; kept for the next try", stopReason: reason)
        case .answered(let status, _, _):
            return Keeping(message: "the LMS answered HTTP \(status); kept for the next try")
        case .redirected(let status, let location):
            let reason = redirectReason(status: status, location: location)
            return Keeping(message: "not sent: \(reason); kept for the next try", stopReason: reason)
        case .failed(let reason):
            let cleaned = RemoteText.clean(reason)
            // The LMS cannot be reached: nothing else will get through now.
            return Keeping(message: "not sent: \(cleaned); kept for the next try", stopReason: cleaned)
        }
    }
}
