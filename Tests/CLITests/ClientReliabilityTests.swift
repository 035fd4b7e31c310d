import Foundation
import Manifest
import Testing
import TestSupport

/// The client against servers that misbehave slowly or hugely, and against power cuts.
@Suite(.serialized) struct ClientReliabilityTests {
    func published() throws -> String {
        let published = TestSupport.temporaryFolder("client") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        return published
    }

    /// A manifest past 64 MiB is refused while it streams: the client never holds more than
    /// the limit, instead of reading all of it into memory first (peak memory shows which).
    /// The same for the split form's index, and for manifest.json where a publish has no index.
    @Test(arguments: ["/manifest.json", "/manifest-index.json"])
    func aManifestPastTheLimitIsRefusedWhileItStreams(endlessFile: String) throws {
        let published = try published()
        if endlessFile == "/manifest.json" { try TestSupport.removeSplitManifest(published) }
        let endless = 384 << 20
        let (url, _, server) = try startFaultServer(serving: published, faults: #"{"\#(endlessFile)": {"endless": \#(endless)}}"#)
        defer { #expect(server.stop(), "the fault server outlived its test") }
        let time = try #require(TestSupport.which("time").map { _ in "/usr/bin/time" } ?? (FileManager.default.isExecutableFile(atPath: "/usr/bin/time") ? "/usr/bin/time" : nil), "GNU time is needed (apt-get install time)")
        for command in [["sync", url, "--to", TestSupport.temporaryFolder("client")], ["diff", url, published]] {
            let result = try TestSupport.run(time, ["-f", "peak-kb %M", TestSupport.coursepackBinary] + command)
            #expect(result.status == 2, "\(command[0]): \(result.stderr)")
            #expect(result.stderr.contains("larger than 64 MiB"), "\(command[0]): \(result.stderr)")
            let peak = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak-kb ") }.flatMap { Int($0.dropFirst(8)) } ?? Int.max
            #expect(peak < 200 << 10, "\(command[0]) held \(peak) KB at its peak")
        }
    }

    /// A server that stops sending mid-archive, or never answers, costs seconds, not minutes.
    @Test func aServerThatStopsSendingOrNeverAnswersIsGivenUpOn() throws {
        let published = try published()
        let page = try fetchedPath(ofPage: "html/welcome_page", in: published)
        let (url, _, server) = try startFaultServer(serving: published, faults: #"{"/\#(page)": {"stall_after": 100}}"#)
        defer { #expect(server.stop(), "the fault server outlived its test") }
        let target = TestSupport.temporaryFolder("client") + "/device"
        var started = Date()
        let stalled = try TestSupport.coursepack(["sync", url, "--to", target, "--idle-timeout", "1", "--connect-timeout", "2"])
        #expect(stalled.status == 1, "the stalled block fails, the rest is installed: \(stalled.stderr)")
        #expect(stalled.stderr.contains("html/welcome_page.zip") || stalled.stderr.contains("welcome_page"), "\(stalled.stderr)")
        #expect(Date().timeIntervalSince(started) < 30, "four attempts of about a second each")
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/html/handout_page/index.html"))

        // The first request of a sync is the split manifest's index.
        let (silentURL, _, silent) = try startFaultServer(serving: published, faults: #"{"/manifest-index.json": {"silent": true}}"#)
        defer { #expect(silent.stop(), "the fault server outlived its test") }
        started = Date()
        let unanswered = try TestSupport.coursepack(["sync", silentURL, "--to", TestSupport.temporaryFolder("client"), "--connect-timeout", "1"])
        #expect(unanswered.status == 2)
        #expect(unanswered.stderr.contains("no answer within 1.0 s"), "\(unanswered.stderr)")
        #expect(Date().timeIntervalSince(started) < 15)
        let badFlag = try TestSupport.coursepack(["sync", silentURL, "--to", TestSupport.temporaryFolder("client"), "--idle-timeout", "0"])
        #expect(badFlag.status == 2)
    }

    /// Installed blocks and the local manifest are on disk before anything names them: with
    /// one `syncfs` for all unpacked blocks (Linux), and with the per-file fallback (Darwin's
    /// path, chosen here through COURSEPACK_SYNC_DURABILITY).
    @Test(arguments: ["file-system", "per-file"])
    func installedBlocksAreSyncedBeforeTheLocalManifestNamesThem(durability: String) throws {
        let published = try published()
        let strace = try requireStrace()
        let target = TestSupport.temporaryFolder("client") + "/device"
        let log = TestSupport.temporaryFolder("strace") + "/trace"
        let traced = try TestSupport.run(strace, ["-f", "-y", "-o", log, "-e", "trace=openat,fsync,syncfs,rename,renameat2,link,linkat",
                                                  "/usr/bin/env", "COURSEPACK_SYNC_DURABILITY=\(durability)",
                                                  TestSupport.coursepackBinary, "sync", published, "--to", target])
        #expect(traced.status == 0, "\(traced.stderr)")
        let python = try #require(TestSupport.which("python3"))
        let checker = TestSupport.packageRoot + "/Tests/fixtures/check_sync_fsync_order.py"
        let check = try TestSupport.run(python, [checker, log, target + exampleFolder])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        // Every block, the shared runtime archive and the search index, which are installed like one.
        let archives = manifest.blocks.compactMap(\.archive) + [manifest.runtime?.archive, manifest.search?.archive].compactMap { $0 }
        #expect(check.stdout.contains("\"installs\": \(archives.count)"), "\(check.stdout)")
        // Four waits for the whole file system (the split manifest's parts before its index,
        // the blocks, the store, and the outline pages before the settled record), or none and
        // an fsync per file.
        #expect(check.stdout.contains("\"syncfs\": \(durability == "file-system" ? 4 : 0)"), "\(check.stdout)")
        #expect(check.stdout.contains("\"settled\": true"), "\(check.stdout)")

        // The checker is not blind: the same log with the syncs taken out fails it.
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let planted = log + ".unsynced"
        let call = durability == "file-system" ? " syncfs(" : " fsync("
        try lines.filter { !$0.contains(call) }.joined(separator: "\n").write(toFile: planted, atomically: true, encoding: .utf8)
        let blind = try TestSupport.run(python, [checker, planted, target + exampleFolder])
        #expect(blind.status == 1, "\(blind.stdout)\(blind.stderr)")
        #expect(blind.stdout.contains("not synced before"), "\(blind.stdout)")
    }

    /// A course of more blocks than one batch is swapped in batch by batch, each made durable
    /// before it is swapped in and after: a killed sync keeps the batches it finished.
    @Test func aLargeCourseIsSwappedInByBatchesEachSyncedBeforeAndAfter() throws {
        let published = TestSupport.temporaryFolder("client") + "/demo"
        #expect(try TestSupport.coursepack(["build", TestSupport.demoCourse, "--out", published, "-q"]).status == 0)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let archives = manifest.blocks.compactMap(\.archive) + [manifest.runtime?.archive, manifest.search?.archive].compactMap { $0 }
        #expect(archives.count > 256, "the demo course holds more than one batch")
        let strace = try requireStrace()
        let target = TestSupport.temporaryFolder("client") + "/device"
        let log = TestSupport.temporaryFolder("strace") + "/trace"
        let traced = try TestSupport.run(strace, ["-f", "-y", "-o", log, "-e", "trace=openat,fsync,syncfs,rename,renameat2,link,linkat",
                                                  TestSupport.coursepackBinary, "sync", published, "--to", target])
        #expect(traced.status == 0, "\(traced.stderr)")
        let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: target).first { !$0.hasPrefix(".") && $0 != "index.html" })
        let check = try TestSupport.run(try #require(TestSupport.which("python3")), [
            TestSupport.packageRoot + "/Tests/fixtures/check_sync_fsync_order.py", log, target + "/" + folder,
        ])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("\"installs\": \(archives.count)"), "\(check.stdout)")
        // Batches of 256 blocks, or half of what the sync swapped in before, whichever is more.
        var (batches, swapped) = (0, 0)
        while swapped < archives.count {
            swapped += min(max(256, swapped / 2), archives.count - swapped)
            batches += 1
        }
        // Two syncs per batch, one for the split manifest's parts before its index, and one for
        // the outline pages before the settled record.
        #expect(check.stdout.contains("\"syncfs\": \(2 * batches + 2)"), "\(check.stdout)")
    }

    /// `diff` and `sync --dry-run` agree on what changed, also when only an archive's path did.
    @Test func diffAndDryRunAgreeWhenOnlyAnArchivePathChanged() throws {
        let old = try published()
        // The edited manifest.json is the publish (as builders wrote it before the split form).
        try TestSupport.removeSplitManifest(old)
        let new = TestSupport.temporaryFolder("client") + "/new"
        try TestSupport.copy(old, to: new)
        try FileManager.default.moveItem(atPath: new + "/html/handout_page.zip", toPath: new + "/html/handout_page-2.zip")
        let python = try #require(TestSupport.which("python3"))
        _ = try TestSupport.run(python, ["-c", """
            import json, sys
            path = sys.argv[1] + "/manifest.json"
            m = json.load(open(path))
            for b in m["blocks"]:
                if b.get("archive") == "html/handout_page.zip":
                    b["archive"] = b["offline_download"]["file_url"] = "html/handout_page-2.zip"
            json.dump(m, open(path, "w"))
            """, new])
        let target = TestSupport.temporaryFolder("client") + "/device"
        #expect(try TestSupport.coursepack(["sync", old, "--to", target]).status == 0)
        let diff = try TestSupport.coursepack(["diff", old, new, "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(diff.stdout.utf8)) as? [String: Any])
        let changed = "block-v1:CoursepackX+CP101+2026+type@html+block@handout_page"
        #expect(json["changed"] as? [String] == [changed], "\(diff.stdout)")
        let plan = try TestSupport.coursepack(["sync", new, "--to", target, "--dry-run"])
        #expect(plan.stdout.contains("outdated  html/handout_page-2.zip"), "\(plan.stdout)")
        #expect(plan.stdout.contains("plan: 1 blocks to download"), "\(plan.stdout)")
    }
}
