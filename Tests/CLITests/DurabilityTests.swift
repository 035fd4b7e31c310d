import Foundation
import Manifest
import Testing
import TestSupport

/// strace must be there under CI; elsewhere its absence is still a recorded failure.
func requireStrace() throws -> String {
    guard let strace = TestSupport.which("strace") else {
        Issue.record("strace is not installed: the fsync order test needs it (scripts/ensure-deps.sh --test installs it)")
        throw CancellationError()
    }
    return strace
}

/// Runs `coursepack ARGUMENTS` under strace and checks the order of fsync, link and rename
/// calls in OUT with Tests/fixtures/check_fsync_order.py; returns its summary.
func tracedBuild(_ arguments: [String], out: String) throws -> (summary: [String: Any], status: Int32, problems: String, log: String) {
    let strace = try requireStrace()
    let log = TestSupport.temporaryFolder("strace") + "/trace"
    let traced = try TestSupport.run(strace, [
        "-f", "-y", "-o", log, "-e", "trace=openat,fsync,fdatasync,syncfs,rename,renameat,renameat2,link,linkat",
        TestSupport.coursepackBinary,
    ] + arguments)
    #expect(traced.status == 0, "\(traced.stderr)")
    let check = try checkFsyncOrder(log: log, out: out)
    return (check.summary, check.status, check.problems, log)
}

func checkFsyncOrder(log: String, out: String) throws -> (summary: [String: Any], status: Int32, problems: String) {
    let check = try TestSupport.run(try #require(TestSupport.which("python3")), [
        TestSupport.packageRoot + "/Tests/fixtures/check_fsync_order.py", log, out,
    ])
    let summary = try JSONSerialization.jsonObject(with: Data(check.stdout.utf8)) as? [String: Any] ?? [:]
    return (summary, check.status, check.stdout + check.stderr)
}

/// A power cut at any moment leaves a manifest whose archives are on disk: each archive's data
/// is synced before it gets its name, its folder before a manifest names it, the manifest's
/// data before its rename, and the output folder after it.
@Suite(.serialized) struct DurabilityTests {
    @Test func aFullBuildSyncsEveryArchiveBeforeTheManifestNamesIt() throws {
        let out = TestSupport.temporaryFolder("durable") + "/out"
        let result = try tracedBuild(["build", TestSupport.demoCourse, "--out", out, "-q"], out: out)
        #expect(result.status == 0, "\(result.problems)")
        // Every archive the manifest names, the blocks' and any it lists apart from them.
        let text = String(decoding: TestSupport.read(out + "/manifest.json"), as: UTF8.self)
        let named = try Set(NSRegularExpression(pattern: #""([^"]+\.zip)""#).matches(in: text, range: NSRange(text.startIndex..., in: text))
            .compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
        #expect(named.count > 250)
        #expect(result.summary["archives"] as? Int == named.count, "every archive was seen getting its name: \(result.summary)")
        #expect(result.summary["manifests"] as? Int == 1)
        // The build record is synced; the caches beside it are not: each is checked when read,
        // and one lost in a power cut costs work, not a byte of the publish (a flush of the disk
        // each, 140 in a build of 3,000 pages).
        let synced = String(decoding: TestSupport.read(result.log), as: UTF8.self).split(separator: "\n").filter { $0.contains("fsync(") }
        #expect(synced.contains { $0.contains("record.bin") }, "the build record is synced")
        for cache in ["block-files.bin", "blocks.bin", "cache.json", "html-files.bin", "page-facts.bin", "search-chunks.bin", "search-parts.bin"] {
            #expect(!synced.contains { $0.contains(cache) }, "\(cache) is a cache, saved unsynced: \(synced.filter { $0.contains(cache) }.prefix(2))")
        }
        #if os(Linux)
        // Hundreds of archives are named unsynced and the file system is synced once before the
        // manifest.
        #expect(result.summary["file_system_syncs"] as? Int == 1, "\(result.summary)")
        // The same trace without that sync is a publish a power cut could break: the check sees it.
        let withoutSync = TestSupport.temporaryFolder("strace") + "/trace-without-syncfs"
        let lines = String(decoding: TestSupport.read(result.log), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        try lines.filter { !$0.contains("syncfs(") }.joined(separator: "\n").write(toFile: withoutSync, atomically: true, encoding: .utf8)
        let broken = try checkFsyncOrder(log: withoutSync, out: out)
        #expect(broken.status == 1)
        #expect(broken.problems.contains("manifest renamed before the data of"), "\(broken.problems)")
        #endif
    }

    /// Changed archives go through a staged copy and a rename over the published name; both
    /// steps are covered, and so are the two manifests.
    @Test func aRebuildThatReplacesArchivesKeepsTheOrderThroughStaging() throws {
        let course = TestSupport.temporaryFolder("durable") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let out = TestSupport.temporaryFolder("durable") + "/out"
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "-q"]).status == 0)
        try TestSupport.write(["html/handout_page.html": "<p>new handout text</p>", "html/welcome_page.html": "<p>welcome again</p>"], under: course)
        let result = try tracedBuild(["build", course, "--out", out, "-q", "--published-at", "2026-12-01T00:00:00Z"], out: out)
        #expect(result.status == 0, "\(result.problems)")
        #expect(result.summary["archives"] as? Int == 5, "two staged copies, two renamed over their names, the new search index: \(result.summary)")
        #expect(result.summary["manifests"] as? Int == 2, "the interim manifest and the final one")
        // Three archives written: each is synced by name, not the whole file system.
        #expect(result.summary["file_system_syncs"] as? Int == 0, "\(result.summary)")
        // Without those syncs the same trace is a publish a power cut could break.
        let withoutSyncs = TestSupport.temporaryFolder("strace") + "/trace-without-archive-fsyncs"
        let lines = String(decoding: TestSupport.read(result.log), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        try lines.filter { !($0.contains("fsync(") && $0.contains(".zip")) }.joined(separator: "\n").write(toFile: withoutSyncs, atomically: true, encoding: .utf8)
        let broken = try checkFsyncOrder(log: withoutSyncs, out: out)
        #expect(broken.status == 1)
        #expect(broken.problems.contains("manifest renamed before the data of"), "\(broken.problems)")
    }
}
