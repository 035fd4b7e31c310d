import ArgumentParser
import CommandLineSupport
import Diagnostics
import Foundation
import Manifest
import ClientTarget
import SyncClient

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring a course in TARGET up to date with its published folder or URL: download only new and outdated blocks, within the target's storage budget.",
        discussion: """
            TARGET holds several courses, each in TARGET/<course folder>/ with its manifest.json and \
            its outline page index.html; TARGET/index.html lists them. A folder synced by an older \
            coursepack (TARGET/manifest.json) is moved into its course folder by the first sync.
            """)

    @Argument(help: "The published folder or its http(s):// URL (where manifest.json is).")
    var source: String

    @Option(name: .customLong("to"), help: "Local folder to keep in sync (several courses may share it).")
    var target: String

    @Option(name: .long, parsing: .upToNextOption, help: "Only these blocks, or the blocks inside these chapters, sequentials or units (usage ids).")
    var blocks: [String] = []

    @Option(name: .long, help: "Storage budget for every course of TARGET, e.g. 200MB, 1.5GB, 500MiB (remembered for later syncs). Least recently used blocks that are not pinned are removed to stay within it.")
    var budget: String?

    @Option(name: .customLong("expire-after"), help: "Remove blocks not opened for this long, e.g. 30d, 12h (remembered for later syncs); pinned blocks stay. A plain sync does not bring them back; --blocks or --next does.")
    var expireAfter: String?

    @Option(name: .long, parsing: .upToNextOption, help: "Keep these always (never evicted): the course id, or chapter, sequential, unit or block usage ids. Remembered.")
    var pin: [String] = []

    @Option(name: .long, parsing: .upToNextOption, help: "Stop keeping these pinned.")
    var unpin: [String] = []

    @Option(name: .long, help: "Prefetch: install the next N blocks in course order after --after.")
    var next: Int?

    @Option(name: .long, help: "The block (or container) the learner is at, for --next.")
    var after: String?

    @Option(name: .long, help: "Parallel downloads.")
    var jobs: Int = 4

    @Option(name: .customLong("max-unpacked-bytes"), help: "Bytes this sync may unpack over all its blocks, e.g. 8GB (default 32GiB); a block that would pass it is not unpacked and its installed version kept.")
    var maxUnpackedBytes: String?

    @Flag(name: .customLong("replace-course"), help: "Let a source that now offers another course than the one synced from it replace that course (otherwise refused).")
    var replaceCourse = false

    @OptionGroup var network: NetworkFlags

    @Flag(name: .customLong("dry-run"), help: "Print the plan (blocks and bytes to download and delete, before any budget) and change nothing.")
    var dryRun = false

    @Flag(name: .long, help: "First send the answers and learner events given offline to the LMS (the coursepack plugin's batch endpoints, else problem_check; needs --lms-url; credentials from --lms-token-file, COURSEPACK_LMS_TOKEN or COURSEPACK_LMS_COOKIE).")
    var submit = false

    @Option(name: .customLong("lms-url"), help: "The LMS answers are sent to, e.g. https://lms.example.org.")
    var lmsURL: String?

    @Option(name: .customLong("lms-token-file"), help: "File holding an access token (or a line `Cookie: sessionid=…; csrftoken=…`).")
    var lmsTokenFile: String?

    @Flag(name: .customLong("allow-insecure-lms"), help: "Let --lms-url be plain http to a host other than this machine (the token then crosses the network readable); otherwise refused.")
    var allowInsecureLMS = false

    @Option(name: .customLong("lms-username"), help: "The learner's LMS username, for sending the blocks opened offline as completions (default: COURSEPACK_LMS_USERNAME).")
    var lmsUsername: String?

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let budget, ByteSize.parse(budget) == nil {
            throw ValidationError("--budget \"\(budget)\" is not a size (examples: 200MB, 1.5GB, 500MiB, 1048576)")
        }
        if let expireAfter, Period.parse(expireAfter) == nil {
            throw ValidationError("--expire-after \"\(expireAfter)\" is not a period (examples: 30d, 12h, 2w)")
        }
        if let maxUnpackedBytes, ByteSize.parse(maxUnpackedBytes).map({ $0 > 0 }) != true {
            throw ValidationError("--max-unpacked-bytes \"\(maxUnpackedBytes)\" is not a size of at least one byte (examples: 8GB, 500MiB)")
        }
        if let next, next < 0 { throw ValidationError("--next must be 0 or more") }
        if (next == nil) != (after == nil) { throw ValidationError("--next and --after go together") }
        if submit && lmsURL == nil { throw ValidationError("--submit needs --lms-url") }
        try network.validate()
    }

    func run() async throws {
        _ = ProcessClock.fallbackStart
        let clientTarget = ClientTarget(root: target)
        if dryRun { return try await printPreview(clientTarget) }
        var answersKept = false
        if submit, let lmsURL { answersKept = try await submitAnswers(clientTarget, lmsURL: lmsURL) }
        let progress = ProgressLine(enabled: isatty(STDERR_FILENO) == 1)
        let report = try await orExitBadInput(cleanup: progress.finish) {
            try await clientTarget.sync(syncRequest) { done, total in progress.update(done, of: total) }
        }
        progress.finish()
        let failed = print(report)
        if failed || answersKept { throw ExitCode(ExitStatus.blocksFailed) }
    }

    var syncRequest: ClientTarget.SyncRequest {
        var request = ClientTarget.SyncRequest(source: SyncSource(source))
        request.selection = blocks
        request.pin = pin
        request.unpin = unpin
        request.budget = budget.flatMap(ByteSize.parse)
        request.expireAfter = expireAfter.flatMap(Period.parse)
        request.next = next
        request.after = after
        request.jobs = jobs
        request.timeouts = network.timeouts
        request.replaceCourse = replaceCourse
        if let limit = maxUnpackedBytes.flatMap(ByteSize.parse) { request.maximumUnpackedBytes = limit }
        return request
    }

    func printPreview(_ clientTarget: ClientTarget) async throws {
        let preview = try await orExitBadInput { try await clientTarget.preview(syncRequest) }
        for folder in preview.replaced { printOutput("replace   \(folder)  (the course this source served before)") }
        let plan = preview.plan
        for (label, blocks) in [("new      ", plan.new), ("outdated ", plan.outdated), ("remove   ", plan.removed)] {
            for block in blocks { printOutput("\(label) \(block.archive ?? "")  \(block.size ?? 0) bytes  \(block.displayName ?? "")") }
        }
        printOutput("plan: \(plan.downloads.count) blocks to download (\(plan.bytesToDownload) bytes), \(plan.removed.count) to delete (\(plan.bytesToDelete) bytes), \(plan.unchanged.count) unchanged")
    }

    /// Prints what the sync did; true when some blocks failed.
    func print(_ report: ClientTarget.SyncReport) -> Bool {
        if report.migrated { printOutput("coursepack: moved the course synced here before into \(target)/\(report.courseFolder)/") }
        for course in report.replacedCourses { printOutput("coursepack: replaced course \(course), which this source served before (--replace-course)") }
        for line in report.repairs { printOutput("repaired: \(line)") }
        guard let summary = report.summary else { return false }
        for leftover in summary.leftoversRemoved { printOutput("repaired: \(report.courseFolder)/\(leftover): removed, left by a sync that was killed") }
        for failure in summary.failures { printError("\(DiagnosticID.label("error", for: failure.error)): \(failure.usageID): \(failure.error)") }
        let megabytes = Double(summary.downloadedBytes) / 1_048_576
        var extra = ""
        if !report.evicted.isEmpty { extra += ", \(report.evicted.count) evicted (least recently used)" }
        if !report.expired.isEmpty { extra += ", \(report.expired.count) expired (not opened within --expire-after)" }
        if !report.overBudget.isEmpty { extra += ", \(report.overBudget.count) asked for but over the budget" }
        if !report.repairs.isEmpty { extra += ", \(report.repairs.count) repairs" }
        printOutput("coursepack: synced \(target)/\(report.courseFolder): \(summary.downloadedBlocks) blocks downloaded (\(summary.downloadedContents) files, \(summary.downloadedBytes) bytes, \(String(format: "%.1f", megabytes)) MB), \(summary.unchangedBlocks) unchanged, \(summary.removedBlocks) removed\(extra), \(summary.failures.count) failed in \(String(format: "%.2f", max(summary.seconds, ProcessClock.secondsSinceStart()))) s\(summary.manifestNotModified ? " (manifest not modified)" : "")")
        if let budget = report.budget, let used = report.installedBytes { printOutput("storage: \(used) of \(budget) bytes used") }
        return !summary.failures.isEmpty
    }
}

extension Sync {
    /// Sends the answers given offline, and the blocks opened offline, before the sync; true when
    /// some are kept for later.
    func submitAnswers(_ clientTarget: ClientTarget, lmsURL: String) async throws -> Bool {
        var request: ClientTarget.SubmitRequest
        do {
            let origin = try LMSOrigin(lmsURL, allowInsecure: allowInsecureLMS)
            let credential = try LMSCredential.load(file: lmsTokenFile, warn: printError)
            request = ClientTarget.SubmitRequest(source: SyncSource(source), origin: origin, credential: credential)
        } catch {
            printError("\(DiagnosticID.label("error", for: error)): \(error)")
            throw ExitCode(ExitStatus.badInput)
        }
        request.username = lmsUsername ?? ProcessInfo.processInfo.environment["COURSEPACK_LMS_USERNAME"]
        request.timeouts = network.timeouts
        let report = try await orExitBadInput { try await clientTarget.submitAnswers(request) }
        let outcome = report.answers
        let waiting = outcome.waiting > 0 ? " (\(outcome.waiting) waiting for the LMS's retry time)" : ""
        printOutput("coursepack: answers: \(outcome.sent) sent, \(outcome.conflicts) held (the block changed), \(outcome.rejected) rejected, \(outcome.kept) kept for later\(waiting)")
        if let reason = outcome.stopReason { printError("error[\(DiagnosticID.answersNotSent.code)]: answers not sent: \(reason); they are kept") }
        if let failure = report.stateFailure {
            printError("\(DiagnosticID.label("warning", for: failure)): \(failure); the problems' pages show it after the next sync")
        }
        if outcome.signInRequired { printError("error[\(DiagnosticID.lmsSignInRequired.code)]: \(request.origin.base) refused the credentials (401/403): sign in again; the answers are kept") }
        if let message = outcome.notEnrolled ?? report.events?.notEnrolled {
            printError("error[\(DiagnosticID.notEnrolled.code)]: \(request.origin.base) says you are not enrolled in course \(report.courseID): \(message); the answers and events are kept")
        }
        var kept = outcome.kept > 0 || outcome.notEnrolled != nil
        if let events = report.events { kept = printEvents(events) || kept }
        if !report.outdatedBlocks.isEmpty {
            printError("warning[\(DiagnosticID.blocksOutdated.code)]: \(report.outdatedBlocks.count) blocks changed on the LMS since this device downloaded them (sync from an up-to-date source to get them): " + report.outdatedBlocks.prefix(20).joined(separator: ", "))
        }
        switch report.completions {
        case nil:
            break
        case .sent:
            printOutput("coursepack: progress: \(report.completionsOffered) blocks opened offline sent as completions")
        case .kept(let reason):
            printOutput("coursepack: progress: \(report.completionsOffered) completions kept for later (\(reason))")
            kept = true
        case .signInRequired:
            printError("error[\(DiagnosticID.lmsSignInRequired.code)]: \(request.origin.base) refused the credentials (401/403): sign in again; the completions are kept")
            kept = true
        case .refused(let message):
            printError("error[\(DiagnosticID.completionsRefused.code)]: the LMS refused the completions: \(message); they are kept")
            kept = true
        }
        return kept
    }
}

extension Sync {
    /// Prints what became of the learner events; true when some are kept for later.
    func printEvents(_ events: AnswerSender.EventSummary) -> Bool {
        guard events.requests > 0 || events.waiting > 0 || events.dropped > 0 || events.kept > 0 else { return false }
        var line = "coursepack: events: \(events.accepted) sent, \(events.refused) refused, \(events.kept) kept for later"
        if events.waiting > 0 { line += ", \(events.waiting) waiting for the LMS's retry time" }
        if events.dropped > 0 { line += ", \(events.dropped) dropped unsent (the events journal was full)" }
        if events.requests > 0 { line += " in \(events.requests) requests" }
        if let offset = events.clockOffset, abs(offset) >= 60 { line += "; this device's clock is \(Int(abs(offset))) s \(offset > 0 ? "behind" : "ahead of") the LMS's" }
        printOutput(line)
        if events.noEndpoint {
            printOutput("coursepack: events: the LMS has no events endpoint (no coursepack plugin): they are kept on this device, not sent")
        }
        if let reason = events.stopReason { printError("error[\(DiagnosticID.eventsNotSent.code)]: events not sent: \(reason); they are kept") }
        return (events.kept > 0 && !events.noEndpoint) || events.stopReason != nil
    }
}

/// Timeouts of every HTTP request `sync` and `diff` make.
struct NetworkFlags: ParsableArguments {
    @Option(name: .customLong("connect-timeout"), help: "Seconds to wait for a server to answer a request (connection and response headers).")
    var connectTimeout: Double = NetworkTimeouts().connect

    @Option(name: .customLong("idle-timeout"), help: "Seconds a transfer may go without receiving data before it is retried or fails.")
    var idleTimeout: Double = NetworkTimeouts().idle

    @Option(name: .customLong("min-speed"), help: "Bytes a second a download must average; a transfer slower than that (after --connect-timeout and one --idle-timeout) is cut and retried.")
    var minimumSpeed: Double = NetworkTimeouts().minimumBytesPerSecond

    var timeouts: NetworkTimeouts { NetworkTimeouts(connect: connectTimeout, idle: idleTimeout, minimumBytesPerSecond: minimumSpeed) }

    func validate() throws {
        guard connectTimeout > 0, idleTimeout > 0 else { throw ValidationError("--connect-timeout and --idle-timeout must be more than 0 seconds") }
        guard minimumSpeed > 0 else { throw ValidationError("--min-speed must be more than 0 bytes a second") }
    }
}
