import Foundation
import Manifest
import SyncClient

extension ClientTarget {
    public struct SubmitRequest: Sendable {
        /// Where the course's current manifest is: it names the course folder the answers wait
        /// in, and an answer to a block changed since is held against it.
        public var source: SyncSource
        public var origin: LMSOrigin
        public var credential: LMSCredential?
        /// The learner's LMS username, for the blocks opened offline; nil sends no completions.
        public var username: String?
        public var timeouts = NetworkTimeouts()

        public init(source: SyncSource, origin: LMSOrigin, credential: LMSCredential?) {
            self.source = source
            self.origin = origin
            self.credential = credential
        }
    }

    public struct SubmitReport: Sendable {
        public var courseFolder = ""
        public var answers = AnswerSender.Summary()
        /// Blocks opened offline that were offered as completions, and what the LMS made of them.
        public var completionsOffered = 0
        public var completions: AnswerSender.CompletionOutcome?
        /// The problems' pages could not be given their new state (see `AnswerStateFiles`); the
        /// answers and results are recorded all the same.
        public var stateFailure: ClientError?
    }

    /// Sends the course's outbox (and the blocks opened offline) to the LMS. Reading the outbox,
    /// sending and marking happen under the target's lock, the one a sync holds: two runs at once
    /// would otherwise both read an answer as pending and both send it. A second run finds the
    /// lock taken and stops with `locked`, having sent nothing.
    public func submitAnswers(_ request: SubmitRequest) async throws(ClientError) -> SubmitReport {
        let server: CourseManifest
        do {
            server = try await SyncClient.serverManifest(request.source, timeouts: request.timeouts)
        } catch {
            throw .sync(error)
        }
        var report = SubmitReport()
        report.courseFolder = try courseFolder(for: server.courseID)
        guard try kind() != .new else { return report }
        try makeFolder(stateFolder)
        let lock = try Self.lock(stateFolder + "/lock", waiting: .none)
        defer { withExtendedLifetime(lock) {} }
        let sender = AnswerSender(
            origin: request.origin, courseID: server.courseID, credential: request.credential,
            timeout: request.timeouts.connect + request.timeouts.idle)
        let outbox = Outbox(folder: SyncClient.stateFolder(of: root + "/" + report.courseFolder))
        do {
            report.answers = try await sender.flush(outbox, server: server)
        } catch {
            switch error {
            case .invalidKey(let invalid): throw .invalidRequest("\(request.source): the course's manifest is refused: \(invalid)")
            case .outbox(let failure): throw .local(path: outbox.path, reason: "\(failure)")
            }
        }
        if let username = request.username, !report.answers.signInRequired {
            let opened = try pendingCompletions(inCourseFolder: report.courseFolder)
            report.completionsOffered = opened.count
            let outcome = await sender.sendCompletions(username: username, blocks: opened)
            report.completions = outcome
            if outcome == .sent { try markCompletionsSent(opened, inCourseFolder: report.courseFolder) }
        }
        do { try AnswerStateFiles.write(courseRoot: root + "/" + report.courseFolder) } catch { report.stateFailure = error }
        return report
    }
}
