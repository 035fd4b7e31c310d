import Foundation
import Manifest
import Testing
import TestSupport

/// nginx must be there under CI; elsewhere its absence is still a recorded failure.
func startNginx(serving root: String) throws -> NginxServer {
    guard let server = try NginxServer(serving: root) else {
        Issue.record("nginx is not installed: sync integration tests need it (apt-get install nginx)")
        throw CancellationError()
    }
    return server
}

/// Checks every unpacked block: its index.html exists and every relative link in it resolves.
func unpackedProblems(_ target: String) throws -> String {
    let script = """
        import json, os, sys
        from html.parser import HTMLParser
        from urllib.parse import unquote, urlsplit
        target = sys.argv[1]
        m = json.load(open(os.path.join(target, "manifest.json")))
        class Links(HTMLParser):
            def __init__(self): super().__init__(); self.links = []
            def handle_starttag(self, tag, attrs):
                for k, v in attrs:
                    if k in ("src", "href") and v: self.links.append(v)
        bad, checked = [], 0
        for b in m["blocks"]:
            if "archive" not in b: continue
            folder = os.path.join(target, b["archive"][:-4])
            page = os.path.join(folder, "index.html")
            if not os.path.isfile(page): bad.append("no " + page); continue
            p = Links(); p.feed(open(page, encoding="utf-8", errors="replace").read())
            for link in p.links:
                if not link.startswith(("static/", "transcripts/", "coursepack.css", "../../")): continue
                checked += 1
                if not os.path.exists(os.path.normpath(os.path.join(folder, unquote(urlsplit(link).path)))): bad.append(f"{page}: {link}")
        print(json.dumps({"bad": bad, "checked": checked}))
        """
    let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, target])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout
}

/// Course folders in a multi-course target (`TARGET/<course id without course-v1:>`).
let exampleFolder = "/CoursepackX+CP101+2026"
let demoFolder = "/OpenedX+DemoX+DemoCourse"

func archiveRequests(_ lines: [String]) -> [String] { lines.filter { $0.contains(".zip ") } }

/// Starts the fault-injecting HTTP server; returns its base URL, log path and process.
func startFaultServer(serving root: String, faults: String) throws -> (url: String, log: String, process: ChildProcess) {
    let folder = TestSupport.temporaryFolder("fault")
    let process = try ChildProcess(try #require(TestSupport.which("python3")), [
        TestSupport.packageRoot + "/Tests/fixtures/fault_server.py", root, folder + "/port", folder + "/log", faults,
    ])
    for _ in 0..<100 where !FileManager.default.fileExists(atPath: folder + "/port") { usleep(50_000) }
    let port = String(decoding: TestSupport.read(folder + "/port"), as: UTF8.self)
    return ("http://127.0.0.1:\(port)", folder + "/log", process)
}

@Suite(.serialized) struct SyncTests {
    @Test func syncDownloadsOnlyWhatChangedAndAnUnchangedCourseCostsA304() throws {
        let course = TestSupport.temporaryFolder("sync") + "/course"
        try TestSupport.copy(TestSupport.demoCourse, to: course)
        let published = TestSupport.temporaryFolder("sync") + "/published"
        #expect(try TestSupport.coursepack(["build", course, "--out", published, "-q"]).status == 0)
        // As builders before the split manifest published (the conditional request is
        // manifest.json's; NoOpSyncTests covers the index).
        try TestSupport.removeSplitManifest(published)
        let server = try startNginx(serving: published)
        defer { #expect(server.stop(), "nginx outlived its test") }
        let target = TestSupport.temporaryFolder("sync") + "/device"

        let first = try TestSupport.coursepack(["sync", server.baseURL, "--to", target])
        #expect(first.status == 0, "\(first.stderr)")
        let publishedManifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        // The shared runtime archive and the search index are downloaded once, like blocks.
        let archives = publishedManifest.blocks.compactMap(\.archive) + [publishedManifest.runtime?.archive, publishedManifest.search?.archive].compactMap { $0 }
        #expect(publishedManifest.runtime != nil && publishedManifest.search != nil)
        #expect(first.stdout.contains("\(archives.count) blocks downloaded"), "\(first.stdout)")
        #expect(first.stdout.contains(" s"), "the summary gives blocks, bytes and seconds")
        // Course files once each instead of block archives (issue 31).
        let contents = try #require(publishedManifest.files)
        let firstRequests = server.requests()
        #expect(archiveRequests(firstRequests).isEmpty, "no block archive is downloaded")
        #expect(Set(Self.contentRequests(firstRequests)) == Set(contents.map { $0.value.path(sha256: $0.key) }))
        #expect(Self.contentRequests(firstRequests).count == contents.count, "each content once")
        let unpacked = try unpackedProblems(target + demoFolder)
        #expect(unpacked.contains("\"bad\": []"), "\(unpacked)")
        #expect(!unpacked.contains("\"checked\": 0"))

        // One html block changes and the course is published again.
        try TestSupport.write(["html/a01fc100e5e64fc5bbca09daa190cfee.html": "<p>A new welcome text.</p>"], under: course)
        #expect(try TestSupport.coursepack(["build", course, "--out", published, "-q"]).status == 0)
        // As builders before the split manifest published (the conditional request is
        // manifest.json's; NoOpSyncTests covers the index).
        try TestSupport.removeSplitManifest(published)
        server.clearLog()
        let second = try TestSupport.coursepack(["sync", server.baseURL, "--to", target])
        #expect(second.status == 0, "\(second.stderr)")
        let secondLog = server.requests()
        // The contents new in the manifest only: the block's page and the search index's text.
        let republished = try #require(try ManifestFile.read(published + "/manifest.json")?.files)
        let added = republished.filter { contents[$0.key] == nil }.map { $0.value.path(sha256: $0.key) }
        #expect(!added.isEmpty && added.count <= 3, "\(added)")
        #expect(archiveRequests(secondLog).isEmpty)
        #expect(Self.contentRequests(secondLog).sorted() == added.sorted(), "\(secondLog)")
        #expect(String(decoding: TestSupport.read(target + demoFolder + "/html/a01fc100e5e64fc5bbca09daa190cfee/index.html"), as: UTF8.self).contains("A new welcome text."))

        server.clearLog()
        let third = try TestSupport.coursepack(["sync", server.baseURL, "--to", target])
        #expect(third.status == 0)
        #expect(third.stdout.contains("manifest not modified"))
        // The split form's index is asked for first (issue 33); this publish has none.
        let thirdLog = server.requests()
        #expect(thirdLog.first?.hasPrefix("GET /manifest-index.json 404 ") == true, "\(thirdLog)")
        #expect(thirdLog.dropFirst() == ["GET /manifest.json 304 0 \"-\""], "\(thirdLog)")

        // status moved to the client half and lists courses (expectation changed on purpose).
        let status = try TestSupport.coursepack(["status", target])
        #expect(status.stdout.contains("\(publishedManifest.blocks.compactMap(\.archive).count) blocks present"), "\(status.stdout)")
        #expect(status.stdout.contains("course OpenedX+DemoX+DemoCourse  course-v1:OpenedX+DemoX+DemoCourse"), "\(status.stdout)")
    }

    /// The course files (`files/…`) a log's requests fetched.
    static func contentRequests(_ log: [String]) -> [String] {
        log.compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 1, fields[0] == "GET", fields[1].hasPrefix("/files/") else { return nil }
            return String(fields[1].dropFirst())
        }
    }

    /// A large archive is fetched in Range slices, so the HTTP stack never holds much of it, and
    /// arrives whole: the unpacked video has the published bytes.
    @Test func aLargeArchiveArrivesInSlicesAndWhole() throws {
        let course = TestSupport.temporaryFolder("sync") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        var rng = SeededGenerator(state: 5)
        let video = (0..<40_000_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        try TestSupport.writeBytes(video, to: course + "/static/large.mp4")
        let page = course + "/html/handout_page.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("\n<video controls src=\"/static/large.mp4\"></video>\n".utf8), to: page)
        let published = TestSupport.temporaryFolder("sync") + "/published"
        #expect(try TestSupport.coursepack(["build", course, "--out", published, "-q"]).status == 0)
        let server = try startNginx(serving: published)
        defer { #expect(server.stop(), "nginx outlived its test") }
        let target = TestSupport.temporaryFolder("sync") + "/device"
        let sync = try TestSupport.coursepack(["sync", server.baseURL, "--to", target])
        #expect(sync.status == 0, "\(sync.stderr)")
        let large = try fetchedPath(of: "static/large.mp4", inBlock: "html/handout_page", published: published) ?? "html/handout_page.zip"
        let slices = server.requests().filter { $0.hasPrefix("GET /\(large) ") }
        #expect(slices.count == 3 && slices.allSatisfy { $0.contains(" 206 ") }, "\(slices)")
        #expect(TestSupport.read(target + exampleFolder + "/html/handout_page/static/large.mp4") == video)
    }

    @Test func dryRunPrintsThePlanAndChangesNothing() throws {
        let published = TestSupport.temporaryFolder("sync")
        _ = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        let target = TestSupport.temporaryFolder("sync") + "/device"
        let plan = try TestSupport.coursepack(["sync", published, "--to", target, "--dry-run"])
        #expect(plan.status == 0, "\(plan.stderr)")
        // Eight pages, the shared runtime two of them load, and the search index.
        #expect(plan.stdout.contains("plan: 10 blocks to download"), "\(plan.stdout)")
        #expect(!FileManager.default.fileExists(atPath: target))
        // A subtree: only the blocks under one chapter, and the search index, which every course gets.
        let chapter = "block-v1:CoursepackX+CP101+2026+type@chapter+block@media"
        let partial = try TestSupport.coursepack(["sync", published, "--to", target, "--blocks", chapter])
        #expect(partial.status == 0, "\(partial.stderr)")
        #expect(partial.stdout.contains("3 blocks downloaded"), "\(partial.stdout)")
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/video/lecture_video/index.html"))
        #expect(!FileManager.default.fileExists(atPath: target + exampleFolder + "/html/welcome_page"))
    }

    @Test func corruptDownloadsKeepTheInstalledVersion() throws {
        let published = TestSupport.temporaryFolder("sync") + "/published"
        _ = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        try withoutCourseFiles(published)
        let server = try startNginx(serving: published)
        defer { #expect(server.stop(), "nginx outlived its test") }
        let target = TestSupport.temporaryFolder("sync") + "/device"
        #expect(try TestSupport.coursepack(["sync", server.baseURL, "--to", target, "--jobs", "2"]).status == 0)
        let installed = TestSupport.read(target + exampleFolder + "/html/welcome_page/index.html")
        let manifestBefore = TestSupport.read(target + exampleFolder + "/manifest.json")

        // The server now lists a new version, but the archive it serves is truncated.
        let path = published + "/html/welcome_page.zip"
        var manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let index = try #require(manifest.blocks.firstIndex { $0.archive == "html/welcome_page.zip" })
        let original = TestSupport.read(path)
        manifest.blocks[index].contentHash = String(repeating: "a", count: 64)
        try ManifestFile.write(manifest, to: published + "/manifest.json")
        // Same size, maybe the same second: move the mtime on so nginx's ETag changes, as a publish does.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: published + "/manifest.json")
        try TestSupport.writeBytes(Array(original.prefix(original.count / 2)), to: path)
        let truncated = try TestSupport.coursepack(["sync", server.baseURL, "--to", target])
        #expect(truncated.status == 1)
        #expect(truncated.stderr.contains("html/welcome_page.zip"), "\(truncated.stderr)")
        #expect(TestSupport.read(target + exampleFolder + "/html/welcome_page/index.html") == installed)
        #expect(TestSupport.read(target + exampleFolder + "/manifest.json") == manifestBefore)

        // Right size, wrong bytes: the sha256 check refuses it.
        var damaged = original
        damaged[damaged.count / 2] ^= 0xFF
        try TestSupport.writeBytes(damaged, to: path)
        let wrongHash = try TestSupport.coursepack(["sync", server.baseURL, "--to", target])
        #expect(wrongHash.status == 1)
        #expect(wrongHash.stderr.contains("sha256 does not match"), "\(wrongHash.stderr)")
        #expect(TestSupport.read(target + exampleFolder + "/html/welcome_page/index.html") == installed)
    }

    @Test func aZipSlipArchiveIsRefusedAndNothingLandsOutside() throws {
        let published = TestSupport.temporaryFolder("sync") + "/published"
        _ = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        try withoutCourseFiles(published)
        // A hostile server swaps in an archive holding ../../../evil.txt, with a matching manifest.
        let evil = published + "/html/welcome_page.zip"
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w") as z:
                z.writestr("index.html", "<p>hi</p>")
                z.writestr("../../../evil.txt", "owned")
            """
        _ = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, evil])
        let patch = """
            import hashlib, json, os, sys
            m = json.load(open(sys.argv[1] + "/manifest.json"))
            for b in m["blocks"]:
                if b.get("archive") == "html/welcome_page.zip":
                    data = open(sys.argv[1] + "/" + b["archive"], "rb").read()
                    b["size"] = len(data); b["sha256"] = hashlib.sha256(data).hexdigest()
                    b["offline_download"]["file_size"] = len(data)
            json.dump(m, open(sys.argv[1] + "/manifest.json", "w"))
            """
        _ = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", patch, published])
        let server = try startNginx(serving: published)
        defer { #expect(server.stop(), "nginx outlived its test") }
        let base = TestSupport.temporaryFolder("sync")
        let target = base + "/a/b/device"
        let result = try TestSupport.coursepack(["sync", server.baseURL, "--to", target])
        #expect(result.status == 1)
        #expect(result.stderr.contains("evil.txt"), "\(result.stderr)")
        #expect(TestSupport.files(under: base).allSatisfy { !$0.contains("evil") })
        #expect(!FileManager.default.fileExists(atPath: target + exampleFolder + "/html/welcome_page"))
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/html/handout_page/index.html"), "the other blocks install")
    }

    @Test func aManifestWithEscapingPathsIsRefusedBeforeAnyDownload() throws {
        let published = TestSupport.temporaryFolder("sync")
        _ = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        // The hostile manifest.json is the publish (as builders wrote it before the split form).
        try TestSupport.removeSplitManifest(published)
        let text = String(decoding: TestSupport.read(published + "/manifest.json"), as: UTF8.self)
        // html.zip would make a block's folder the whole html/ folder; a nested path would put one
        // block's folder inside another's.
        for (bad, reason) in [
            ("../../escape.zip", "unsafe archive path"), (".coursepack-sync/x.zip", "unsafe archive path"),
            ("html.zip", "unsafe archive path"), ("html/handout_page/inner.zip", "unsafe archive path"),
            ("manifest.json.zip", "unsafe archive path"),
        ] {
            try TestSupport.write(["manifest.json": text.replacingOccurrences(of: "\"html/welcome_page.zip\"", with: "\"\(bad)\"")], under: published)
            let target = TestSupport.temporaryFolder("sync") + "/device"
            let result = try TestSupport.coursepack(["sync", published, "--to", target])
            #expect(result.status == 2)
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target), "nothing is created")
        }
        try TestSupport.write(["manifest.json": "{ not json"], under: published)
        let notJSON = try TestSupport.coursepack(["sync", published, "--to", TestSupport.temporaryFolder("sync")])
        #expect(notJSON.status == 2)
        #expect(notJSON.stderr.contains("manifest.json"))
    }

    @Test func serverErrorsAreRetriedAndDroppedConnectionsResumed() throws {
        let published = TestSupport.temporaryFolder("sync") + "/published"
        _ = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        try withoutCourseFiles(published)
        let faults = #"{"/html/welcome_page.zip": {"fail_first": 1}, "/video/lecture_video.zip": {"cut_after": 1500}}"#
        let (url, log, process) = try startFaultServer(serving: published, faults: faults)
        defer { #expect(process.stop(), "the fault server outlived its test") }
        let target = TestSupport.temporaryFolder("sync") + "/device"
        let result = try TestSupport.coursepack(["sync", url, "--to", target])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = String(decoding: TestSupport.read(log), as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("GET /html/welcome_page.zip") }.count == 2, "a 500, then success")
        #expect(lines.contains("GET /video/lecture_video.zip bytes=1500-"), "the cut download resumes where it stopped: \(lines)")
        #expect(try unpackedProblems(target + exampleFolder).contains("\"bad\": []"))
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/video/lecture_video/static/lecture.mp4"))
    }

    /// A test runner that dies without stopping its fault server does not leave it behind.
    @Test func aFaultServerWhoseStarterDiesExitsToo() throws {
        let folder = TestSupport.temporaryFolder("fault")
        let python = try #require(TestSupport.which("python3"))
        // The shell starts the server in the background and exits while it runs, as a killed
        // runner would. No pipe: the server would hold it open. The shell waits for the port
        // file (written after the server noted its parent), at most 10 s, not a fixed time.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "\"$0\" \"$1\" \"$2\" \"$3\" \"$4\" '{}' & echo $! > \"$2/pid\"; "
            + "i=0; while [ ! -e \"$3\" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done",
            python, TestSupport.packageRoot + "/Tests/fixtures/fault_server.py", folder, folder + "/port", folder + "/log"]
        shell.standardInput = FileHandle.nullDevice
        shell.standardOutput = FileHandle.nullDevice
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        let pid = try #require(Int32(String(decoding: TestSupport.read(folder + "/pid"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: folder + "/port") { usleep(50_000) }
        #expect(FileManager.default.fileExists(atPath: folder + "/port"), "the server started")
        var waited = 0
        while TestSupport.isAlive(pid) && waited < 100 { usleep(50_000); waited += 1 }
        #expect(!TestSupport.isAlive(pid), "the orphaned fault server exited")
        if TestSupport.isAlive(pid) { kill(pid, SIGKILL) }
    }

    static func size(_ path: String) -> Int { TestSupport.read(path).count }
}
