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
        /// Events a request to the events endpoint carries at most (the plugin takes 100).
        public var eventBatchSize = 100

        public init(source: SyncSource, origin: LMSOrigin, credential: LMSCredential?) {
            self.source = source
            self.origin = origin
            self.credential = credential
        }
    }

    public struct SubmitReport: Sendable {
        public var courseFolder = ""
        public var courseID = ""
        public var answers = AnswerSender.Summary()
        /// Blocks opened offline that were offered as completions, and what the LMS made of them.
        public var completionsOffered = 0
        public var completions: AnswerSender.CompletionOutcome?
        /// The problems' pages could not be given their new state (see `AnswerStateFiles`); the
        /// answers and results are recorded all the same.
        public var stateFailure: ClientError?
        /// What became of the learner events recorded offline; nil when none were sent (the
        /// credentials were refused first).
        public var events: AnswerSender.EventSummary?
        /// What the LMS said of the installed blocks' versions before the answers were sent;
        /// nil when it was not asked or could not tell.
        public var versions: AnswerSender.VersionCheck?
        /// Blocks the LMS has in another version than this device (from `versions`, and from
        /// answers refused `content_changed`): the learner answered content it has since changed.
        public var outdatedBlocks: [String] = []
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
        report.courseID = server.courseID
        guard try kind() != .new else { return report }
        try makeFolder(stateFolder)
        let lock = try Self.lock(stateFolder + "/lock", waiting: .none)
        defer { withExtendedLifetime(lock) {} }
        let sender = AnswerSender(
            origin: request.origin, courseID: server.courseID, credential: request.credential,
            timeout: request.timeouts.connect + request.timeouts.idle)
        let state = SyncClient.stateFolder(of: root + "/" + report.courseFolder)
        let outbox = Outbox(folder: state)
        report.versions = await checkVersions(of: report.courseFolder, outbox: outbox, sender: sender)
        do {
            report.answers = try await sender.flush(outbox, server: server)
            if !report.answers.signInRequired && report.answers.notEnrolled == nil {
                report.events = try await sender.flushEvents(EventOutbox(folder: state), batchSize: request.eventBatchSize)
            }
        } catch {
            switch error {
            case .invalidKey(let invalid): throw .invalidRequest("\(request.source): the course's manifest is refused: \(invalid)")
            case .outbox(let failure): throw .local(path: outbox.path, reason: "\(failure)")
            }
        }
        let refusedChanged = outbox.entries().filter { $0.lmsResult?.reason == "content_changed" }.map(\.usageID)
        let changed = report.versions.map { Array($0.outdated.keys) } ?? []
        report.outdatedBlocks = Array(Set(refusedChanged + changed)).sorted()
        if let username = request.username, !report.answers.signInRequired, report.answers.notEnrolled == nil {
            let opened = try pendingCompletions(inCourseFolder: report.courseFolder)
            report.completionsOffered = opened.count
            let outcome = await sender.sendCompletions(username: username, blocks: opened)
            report.completions = outcome
            if outcome == .sent { try markCompletionsSent(opened, inCourseFolder: report.courseFolder) }
        }
        do { try AnswerStateFiles.write(courseRoot: root + "/" + report.courseFolder) } catch { report.stateFailure = error }
        return report
    }

    /// Asks the LMS which installed blocks changed since they were downloaded, when answers wait
    /// to be sent: the learner then hears which answers were given on content since changed.
    func checkVersions(of courseFolder: String, outbox: Outbox, sender: AnswerSender) async -> AnswerSender.VersionCheck? {
        guard outbox.entries().contains(where: { $0.state == .pending || $0.state == .sending }),
            let installed = InstalledCourse(courseRoot: root + "/" + courseFolder)
        else { return nil }
        let versions = Dictionary(
            installed.manifest.blocks.compactMap { block in installed.blockBytes[block.usageID] == nil ? nil : block.contentHash.map { (block.usageID, $0) } },
            uniquingKeysWith: { first, _ in first })
        return await sender.checkVersions(versions)
    }
}
