import Foundation
import Testing
import TestSupport

/// Whole outputs pinned under Tests/CLITests/Golden/: the demo course's manifest.json and build
/// report, and what `inspect`, `sync --dry-run`, `status` and each program's `--help` print.
/// A change to any of them fails here with the first differing line; when it is intended,
///
///     UPDATE_GOLDEN=1 swift test --filter Golden      (or UPDATE_GOLDEN=1 make test)
///
/// rewrites the files, and `git diff Tests/CLITests/Golden` is the review.
///
/// What varies from run to run is kept out, not normalised, where the programs allow it: the
/// publish time is given (`--published-at`), and the page runtime is a small stand-in written
/// here instead of Debian's jquery and katex, whose version would otherwise be pinned too. Three
/// normalisations remain, each documented in `Transcript`: the temporary folders' absolute
/// paths become `<demo>`, `<out>`, `<target>`…, the report's `*_seconds` durations become 0,
/// and the times `status` shows for the last use of each block (the sync's) become `<sync time>`.
@Suite(.serialized) struct GoldenOutputTests {
    static let publishedAt = "2026-11-22T10:00:00Z"

    @Test func demoManifest() throws {
        let build = try DemoBuild.shared.get()
        expectGolden("demo-manifest.json", String(decoding: TestSupport.read(build.out + "/manifest.json"), as: UTF8.self))
    }

    @Test func demoBuildReport() throws {
        let build = try DemoBuild.shared.get()
        let report = String(decoding: TestSupport.read(build.report), as: UTF8.self)
        expectGolden("demo-build-report.json", Transcript.zeroingDurations(in: build.transcript.hidingPaths(in: report)))
    }

    @Test func inspect() throws {
        let transcript = Transcript(paths: [(TestSupport.demoCourse, "<demo>")])
        try expectGolden("inspect-demo.txt", transcript.run("coursepack", ["inspect", TestSupport.demoCourse]))
    }

    /// The example course's tree (it was checked line by line in CLITests before).
    @Test func inspectExample() throws {
        let transcript = Transcript(paths: [(TestSupport.exampleCourse, "<example>")])
        try expectGolden("inspect-example.txt", transcript.run("coursepack", ["inspect", TestSupport.exampleCourse]))
    }

    /// The plan of a first sync of the published demo course into an empty folder.
    @Test func syncDryRun() throws {
        let build = try DemoBuild.shared.get()
        let target = TestSupport.temporaryFolder("golden") + "/device"
        let transcript = Transcript(paths: build.transcript.paths + [(target, "<target>")])
        try expectGolden("sync-dry-run-demo.txt", transcript.run("coursepack", ["sync", build.out, "--to", target, "--dry-run"]))
        #expect(!FileManager.default.fileExists(atPath: target + "/.coursepack-sync"), "a dry run changes nothing")
    }

    /// `status --blocks` of a folder holding the synced demo course, never opened.
    @Test func status() throws {
        let build = try DemoBuild.shared.get()
        let target = TestSupport.temporaryFolder("golden") + "/device"
        let synced = try TestSupport.coursepack(["sync", build.out, "--to", target])
        #expect(synced.status == 0, "\(synced.stderr)")
        let transcript = Transcript(paths: build.transcript.paths + [(target, "<target>")])
        try expectGolden("status-demo.txt", Transcript.hidingLastUse(in: transcript.run("coursepack", ["status", target, "--blocks"])))
    }

    @Test(arguments: ["coursepack", "coursepack-sync", "coursepack-device"])
    func help(program: String) throws {
        try expectGolden("help-\(program).txt", Transcript(paths: []).run(program, ["--help"]))
    }

    /// A golden file no test reads would go stale unnoticed: under `UPDATE_GOLDEN=1` it is
    /// removed, otherwise the suite fails.
    @Test func everyGoldenFileBelongsToATest() throws {
        let folder = URL(fileURLWithPath: GoldenFile("").path).path
        let known: Set<String> = [
            "demo-manifest.json", "demo-build-report.json", "inspect-demo.txt", "inspect-example.txt", "sync-dry-run-demo.txt", "status-demo.txt",
            "help-coursepack.txt", "help-coursepack-sync.txt", "help-coursepack-device.txt",
        ]
        let unknown = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !known.contains($0) }.sorted()
        if GoldenFile.updating {
            for name in unknown { try FileManager.default.removeItem(atPath: folder + "/" + name) }
        } else {
            #expect(unknown.isEmpty, "golden files no test checks (remove them with \(GoldenFile.regenerateCommand)): \(unknown)")
        }
    }

    private func expectGolden(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if let problem = GoldenFile(name).check(actual) {
            Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
        }
    }
}

/// What a program printed, as one text to compare: the command line, the exit status, stdout
/// and stderr. The programs run with `COLUMNS=80`, so `--help` wraps the same in any terminal.
struct Transcript {
    /// Absolute paths and the placeholders that replace them (`GoldenFile.replacingPaths`).
    let paths: [(path: String, placeholder: String)]

    func run(_ program: String, _ arguments: [String]) throws -> String {
        let binary = URL(fileURLWithPath: TestSupport.coursepackBinary).deletingLastPathComponent().appendingPathComponent(program).path
        let result = try TestSupport.run("/usr/bin/env", ["COLUMNS=80", binary] + arguments)
        let text = """
            $ \(([program] + arguments).joined(separator: " "))
            exit status \(result.status)
            --- stdout
            \(result.stdout)--- stderr
            \(result.stderr)
            """
        return hidingPaths(in: text)
    }

    func hidingPaths(in text: String) -> String {
        GoldenFile.replacingPaths(in: text, paths)
    }

    /// `last use 2026-…Z` (and `last use: 2026-…Z`) become `last use <sync time>`: a sync
    /// records when it installed each block, on the real clock.
    /// The target's disk use too (its state holds those times, its folders' sizes depend on
    /// the order entries were made): the parts are checked against `du -sb` elsewhere.
    static func hidingLastUse(in status: String) -> String {
        status.replacing(#/(last use:? )[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/#) { "\($0.output.1)<sync time>" }
            .replacing(#/(blocks|shared files|runtime|search|outline pages|state) [0-9]+/#) { "\($0.output.1) <bytes>" }
            .replacing(#/(courses?), [0-9]+ bytes on disk/#) { "\($0.output.1), <du> bytes on disk" }
    }

    /// Every `"…_seconds": number` in a report becomes `"…_seconds": 0`: how long a build took
    /// is the one thing in the report that no input fixes.
    static func zeroingDurations(in report: String) -> String {
        report.replacing(#/("[a-z_]+_seconds"\s*:\s*)-?[0-9][0-9.eE+-]*/#) { "\($0.output.1)0" }
    }
}

/// The demo course built once for the suite by `coursepack build`, with a fixed publish time
/// and a stand-in page runtime.
struct DemoBuild: Sendable {
    let out: String
    let report: String
    let transcript: Transcript

    static let shared: Result<DemoBuild, any Error> = Result { try DemoBuild() }

    private init() throws {
        let folder = TestSupport.temporaryFolder("golden")
        out = folder + "/out"
        report = folder + "/report.json"
        let runtime = folder + "/runtime"
        try Self.writeStandInRuntime(to: runtime)
        transcript = Transcript(paths: [(TestSupport.demoCourse, "<demo>"), (out, "<out>"), (folder, "<tmp>")])
        let built = try TestSupport.coursepack([
            "build", TestSupport.demoCourse, "--out", out, "--report", report, "--published-at", GoldenOutputTests.publishedAt,
            "--runtime-from", runtime, "-q",
        ])
        guard built.status == 0 else { throw DemoBuildFailed(status: built.status, stderr: built.stderr) }
    }

    /// The files `--runtime-from` reads (Debian's libjs-jquery and libjs-katex layout), a line
    /// each: the runtime archive's hash then depends on nothing installed on the machine.
    static func writeStandInRuntime(to folder: String) throws {
        let files = [
            "jquery/jquery.min.js", "katex/katex.min.js", "katex/katex.min.css", "katex/contrib/auto-render.js",
            "katex/fonts/KaTeX_Main-Regular.woff2",
        ]
        try TestSupport.write(Dictionary(uniqueKeysWithValues: files.map { ($0, "/* stand-in for \($0) in golden tests */\n") }), under: folder)
    }

    struct DemoBuildFailed: Error, CustomStringConvertible {
        let status: Int32
        let stderr: String
        var description: String { "coursepack build of the demo course exited \(status): \(stderr)" }
    }
}

extension Transcript: Sendable {}
