import ArgumentParser
import CommandLineSupport
import BlockRenderer
import Foundation
import Packager

struct Build: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Package every published block of a course into DIR, with DIR/manifest-index.json and its parts (and DIR/manifest.json while it fits the clients' limit).")

    @OptionGroup var source: CourseSource

    @Option(name: .long, help: "Output folder; its manifest (manifest.json, else manifest-index.json and its parts) is the previous publish.")
    var out: String

    @Option(name: .customLong("published-at"), help: "Publish time, ISO 8601 UTC (default: now).")
    var publishedAt: String?

    @Option(name: .long, help: "Threads that load and package blocks (default: all cores); 1 keeps the build on one thread.")
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(name: .long, help: "Write a JSON report of the build to FILE.")
    var report: String?

    @Option(name: .long, help: "Folder of templates overriding the defaults (page.mustache, coursepack.css).")
    var templates: String?

    @Option(name: .customLong("lms-url"), help: "LMS base URL for course links that cannot work offline.")
    var lmsURL: String?

    @Option(name: .customLong("public-url"), help: "URL where DIR is served (https://cdn.example.org/courses/<course folder>/): offline_download.file_url becomes absolute, as the official Open edX apps expect.")
    var publicURL: String?

    @Option(name: .customLong("lock-timeout"), help: "Seconds to wait for another build of the same DIR.")
    var lockTimeout: Double = 30

    @Option(name: .customLong("runtime-from"), help: "Folder with Debian's jquery/ and katex/ (libjs-jquery, libjs-katex) for the shared page runtime.")
    var runtimeFrom: String = BuildOptions.defaultRuntimeSource

    @Option(name: .customLong("state-dir"), help: "Folder for the build state and hash cache, outside DIR (default: DIR.coursepack-state beside DIR).")
    var stateDir: String?

    @Option(name: .long, help: "Deflate level, 1-9.")
    var level: Int32 = 6

    @Flag(name: .long, help: "Exit 1 when there are warnings (unresolved links).")
    var strict = false

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    /// The library checks every option; a refusal is a usage error, before anything runs.
    func validate() throws {
        do {
            _ = try options(templates: .defaults())
        } catch {
            throw ValidationError("\(error)")
        }
    }

    private func options(templates: PageTemplates) throws(BuildError) -> BuildOptions {
        try BuildOptions(
            outputFolder: out, publishedAt: publishedAt ?? PublishTime.now().text,
            jobs: jobs, compressionLevel: level, templates: templates, lmsURL: lmsURL, lockTimeout: lockTimeout,
            stateFolder: stateDir, runtimeSource: runtimeFrom, publicURL: publicURL)
    }

    func run() throws {
        let templateSet = try orExitBadInput { try templates.map { try PageTemplates.overriding(with: $0) } ?? .defaults() }
        var options = try orExitBadInput { try self.options(templates: templateSet) }
        // The process ends after this build: its memory goes back at exit, not block by block.
        options.freesMemoryWhenDone = false
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1)
        let result = try orExitBadInput(cleanup: progress.finish) {
            try CoursePackager(options: options).build(coursePath: source.course) { done, total in progress.update(done, of: total) }
        }
        progress.finish()

        for error in result.errors { printError("\(error.label("error")): \(error)") }
        if !quiet {
            let shown = 20
            for warning in result.warnings.prefix(shown) {
                printError("\(warning.label("warning")): \(warning)\(warning.reference.map { ": \($0)" } ?? "")")
            }
            if result.warnings.count > shown {
                printError("warning: … and \(result.warnings.count - shown) more\(report == nil ? " (see --report FILE)" : " in \(report!)")")
            }
            let c = result.counts
            printOutput("coursepack: \(result.courseID): \(c.built) built, \(c.reused) reused, \(c.removed) removed, \(c.failed) failed, \(c.offlineFalse) online only, \(result.warnings.count) warnings in \(String(format: "%.2f", result.durations.totalSeconds)) s")
            // Without manifest.json (a course too large for it, CP331), the index is the publish.
            let manifest = FileManager.default.fileExists(atPath: out + "/manifest.json") ? "manifest.json" : "manifest-index.json"
            printOutput("coursepack: bundles in \(out)/, manifest at \(out)/\(manifest)")
        }
        if let report {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                try encoder.encode(result).write(to: URL(fileURLWithPath: report))
            } catch {
                printError("error: \(report): cannot write the report: \(error.localizedDescription)")
                throw ExitCode(ExitStatus.blocksFailed)
            }
        }
        if result.counts.failed > 0 || (strict && !result.warnings.isEmpty) {
            throw ExitCode(ExitStatus.blocksFailed)
        }
    }
}
