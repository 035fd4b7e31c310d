import Foundation
import Manifest
import Testing
import TestSupport

/// What a sync may unpack, which course it may replace, and what it finds after a sync was
/// killed or a block was damaged (issue 17).
@Suite(.serialized) struct SyncSafetyTests {
    static let exampleID = "course-v1:CoursepackX+CP101+2026"

    /// `published` with its manifest's course id changed: another course to the client, made
    /// of the same archives.
    static func republish(_ published: String, as courseID: String) throws {
        // The edited manifest.json is the publish (no split form, as builders wrote it before).
        try TestSupport.removeSplitManifest(published)
        let text = String(decoding: TestSupport.read(published + "/manifest.json"), as: UTF8.self)
        #expect(text.contains("\"course_id\" : \"\(exampleID)\""))
        try TestSupport.write(["manifest.json": text.replacingOccurrences(of: "\"course_id\" : \"\(exampleID)\"", with: "\"course_id\" : \"\(courseID)\"")], under: published)
    }

    static func stagingLeftovers(_ root: String) -> [String] {
        TestSupport.files(under: root).filter { $0.contains(".new-") || $0.contains(".old-") }
    }

    @Test func aSyncPastItsUnpackedBudgetUnpacksNoBlockHalfAndKeepsTheInstalledOnes() throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("unpacked") + "/device"
        let course = target + exampleFolder

        // One byte: nothing can be unpacked; every block is refused whole, the sync says why.
        let refused = try TestSupport.coursepack(["sync", published, "--to", target, "--max-unpacked-bytes", "1"])
        #expect(refused.status == 1, "\(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("the sync would unpack more than its budget of 1 bytes (--max-unpacked-bytes)"), "\(refused.stderr)")
        #expect(try ClientTargetTests.installed(course).ids.isEmpty)
        #expect(Self.stagingLeftovers(target) == [])

        // Room for some blocks, not all: each one installed is whole, the others are refused.
        let full = try #require(try ManifestFile.read(published + "/manifest.json"))
        let offline = full.blocks.filter(\.isOffline).count + (full.runtime == nil ? 0 : 1)
        let partial = try TestSupport.coursepack(["sync", published, "--to", target, "--max-unpacked-bytes", "20kB", "--jobs", "1"])
        #expect(partial.status == 1, "\(partial.stderr)")
        let some = try ClientTargetTests.installed(course)
        #expect(some.bytes <= 20_000, "\(some.bytes)")
        #expect(!some.ids.isEmpty && some.ids.count < offline, "\(some.ids.count) of \(offline)")
        let verified = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!verified.stdout.contains("damaged") && !verified.stdout.contains("missing"), "\(verified.stdout)")
        #expect(Self.stagingLeftovers(target) == [])

        // The default budget installs the rest.
        let rest = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(rest.status == 0, "\(rest.stderr)")
        let all = try ClientTargetTests.installed(course)

        // An update past the budget keeps the installed version of every block, byte for byte.
        let changed = TestSupport.temporaryFolder("unpacked") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: changed)
        let page = changed + "/html/welcome_page.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>Added in the second edition.</p>".utf8), to: page)
        #expect(try TestSupport.coursepack(["build", changed, "--out", published, "-q"]).status == 0)
        let before = ClientTargetTests.snapshot(course)
        let tooSmall = try TestSupport.coursepack(["sync", published, "--to", target, "--max-unpacked-bytes", "1"])
        #expect(tooSmall.status == 1)
        #expect(tooSmall.stderr.contains("html/welcome_page.zip: not unpacked"), "\(tooSmall.stderr)")
        let installedNow = try ClientTargetTests.installed(course)
        #expect(installedNow.ids == all.ids)
        #expect(ClientTargetTests.differences(before, ClientTargetTests.snapshot(course)).allSatisfy { !$0.hasPrefix("html/") && !$0.hasPrefix("video/") && !$0.hasPrefix("problem/") },
                "no block folder changed")
        let updated = try TestSupport.coursepack(["sync", published, "--to", target])
        // The page and the search index, whose text changed with it; the index the refused sync
        // kept was still in place.
        #expect(updated.status == 0 && updated.stdout.contains("2 blocks downloaded") && !updated.stdout.contains("repair"), "\(updated.stdout)")
        #expect(String(decoding: TestSupport.read(course + "/html/welcome_page/index.html"), as: UTF8.self).contains("second edition"))

        let bad = try TestSupport.coursepack(["sync", published, "--to", target, "--max-unpacked-bytes", "0"])
        #expect(bad.status == 2 && bad.stderr.contains("--max-unpacked-bytes \"0\""), "\(bad.stderr)")
    }

    /// A source that served one course and now serves another does not replace it unasked, and
    /// never while answers given in it wait to be sent.
    @Test func aSourceOfferingAnotherCourseIsRefusedUnlessReplaceCourse() throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("replace") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        try Self.republish(published, as: "course-v1:CoursepackX+CP102+2027")
        let before = ClientTargetTests.snapshot(target)

        for arguments in [["sync", published, "--to", target], ["sync", published, "--to", target, "--dry-run"]] {
            let refused = try TestSupport.coursepack(arguments)
            #expect(refused.status == 2, "\(arguments): \(refused.status) \(refused.stdout)")
            #expect(refused.stderr.contains("holds course \(Self.exampleID), the source offers course-v1:CoursepackX+CP102+2027: refusing to replace it"), "\(refused.stderr)")
            #expect(ClientTargetTests.differences(before, ClientTargetTests.snapshot(target)) == [], "\(arguments) changed the target")
        }

        // An answer waiting in the course's outbox: not even --replace-course deletes it.
        let outbox = target + exampleFolder + "/.coursepack-sync/outbox.jsonl"
        let answer = #"{"entry":{"attempts":0,"fields":{"input_q_2_1":["a"]},"id":"a1","state":"pending","timestamp":"2026-11-23T10:00:00Z","usage_id":"block-v1:CoursepackX+CP101+2026+type@problem+block@q"}}"#
        try TestSupport.write([".coursepack-sync/outbox.jsonl": answer + "\n"], under: target + exampleFolder)
        let waiting = ClientTargetTests.snapshot(target)
        let kept = try TestSupport.coursepack(["sync", published, "--to", target, "--replace-course"])
        #expect(kept.status == 2)
        #expect(kept.stderr.contains("1 answers given offline in course \(Self.exampleID) wait to be sent"), "\(kept.stderr)")
        #expect(ClientTargetTests.differences(waiting, ClientTargetTests.snapshot(target)) == [])
        try FileManager.default.removeItem(atPath: outbox)

        let replaced = try TestSupport.coursepack(["sync", published, "--to", target, "--replace-course"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout.contains("replaced course \(Self.exampleID)"), "\(replaced.stdout)")
        #expect(!FileManager.default.fileExists(atPath: target + exampleFolder))
        let status = try TestSupport.coursepack(["status", target])
        #expect(status.stdout.contains("course CoursepackX+CP102+2027  course-v1:CoursepackX+CP102+2027") && status.stdout.contains("1 course,"), "\(status.stdout)")
    }

    /// A target whose record names another course than its folder holds (edited, or restored
    /// from another device): the course sync underneath refuses rather than replace the blocks.
    @Test func aCourseFolderHoldingAnotherCourseThanItsRecordIsNotReplaced() throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("record") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        try Self.republish(published, as: "course-v1:CoursepackX+CP102+2027")
        let statePath = target + "/.coursepack-sync/target.json"
        var state = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(statePath))) as? [String: Any])
        var courses = try #require(state["courses"] as? [String: Any])
        var record = try #require(courses[String(exampleFolder.dropFirst())] as? [String: Any])
        record["course_id"] = "course-v1:CoursepackX+CP102+2027"
        courses[String(exampleFolder.dropFirst())] = record
        state["courses"] = courses
        try TestSupport.writeBytes([UInt8](try JSONSerialization.data(withJSONObject: state)), to: statePath)
        let html = ClientTargetTests.snapshot(target + exampleFolder + "/html")
        let refused = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(refused.status == 2, "\(refused.stdout)")
        #expect(refused.stderr.contains("holds course \(Self.exampleID), the source offers course-v1:CoursepackX+CP102+2027"), "\(refused.stderr)")
        #expect(ClientTargetTests.differences(html, ClientTargetTests.snapshot(target + exampleFolder + "/html")) == [])
        #expect(try ManifestFile.read(target + exampleFolder + "/manifest.json")?.courseID == Self.exampleID)
    }

    /// Two course ids that clean to one folder name get two folders, whether the first was
    /// synced into a target of several courses or into the old single-course layout.
    @Test func coursesWhoseFolderNamesCollideNeverShareAFolder() throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        let other = TestSupport.temporaryFolder("collide") + "/published"
        try TestSupport.copy(published, to: other)
        // `course-v1:` is dropped from folder names: this id cleans to the example's folder name.
        try Self.republish(other, as: "CoursepackX+CP101+2026")

        let target = TestSupport.temporaryFolder("collide") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let example = ClientTargetTests.snapshot(target + exampleFolder + "/html")
        let second = try TestSupport.coursepack(["sync", other, "--to", target])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(ClientTargetTests.differences(example, ClientTargetTests.snapshot(target + exampleFolder + "/html")) == [])
        #expect(try ClientTargetTests.installed(target + exampleFolder + "-2").ids == (try ClientTargetTests.installed(target + exampleFolder).ids))

        // The old layout: the example's content at the top, migrated when the other course comes.
        let old = TestSupport.temporaryFolder("collide") + "/old-device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", old]).status == 0)
        try FileManager.default.removeItem(atPath: old + "/.coursepack-sync")
        try FileManager.default.removeItem(atPath: old + "/index.html")
        for name in try FileManager.default.contentsOfDirectory(atPath: old + exampleFolder) where ![".coursepack-sync", "index.html", "_navigation"].contains(name) {
            try FileManager.default.moveItem(atPath: old + exampleFolder + "/" + name, toPath: old + "/" + name)
        }
        try FileManager.default.removeItem(atPath: old + exampleFolder)
        let oldHTML = ClientTargetTests.snapshot(old + "/html")
        let dryRun = try TestSupport.coursepack(["sync", other, "--to", old, "--dry-run"])
        #expect(dryRun.status == 0 && dryRun.stdout.contains("0 to delete"), "\(dryRun.stdout) \(dryRun.stderr)")
        let migrated = try TestSupport.coursepack(["sync", other, "--to", old])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("moved the course synced here before"), "\(migrated.stdout)")
        #expect(ClientTargetTests.differences(oldHTML, ClientTargetTests.snapshot(old + exampleFolder + "/html")) == [])
        #expect(FileManager.default.fileExists(atPath: old + exampleFolder + "-2/html/welcome_page/index.html"))
        let status = try TestSupport.coursepack(["status", old])
        #expect(status.stdout.contains("course CoursepackX+CP101+2026  \(Self.exampleID)") && status.stdout.contains("course CoursepackX+CP101+2026-2  CoursepackX+CP101+2026"), "\(status.stdout)")
    }

    @Test func statusReportsMissingAndDamagedBlocksAndLeftoversThenASyncRepairsThem() throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("status") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let course = target + exampleFolder
        let good = ClientTargetTests.snapshot(course + "/html")
        let fm = FileManager.default
        try fm.removeItem(atPath: course + "/html/welcome_page")
        try TestSupport.write(["html/handout_page/index.html": "<p>cut short"], under: course)
        var page = TestSupport.read(course + "/html/styled_page/index.html")
        page[page.count / 2] ^= 0x20
        try TestSupport.writeBytes(page, to: course + "/html/styled_page/index.html")
        // What a sync killed while unpacking leaves: a staging folder, a half-written manifest,
        // and a download that is not a file.
        try TestSupport.write(["html/.interactive_page.new-4242-17/index.html": "<p>half", ".manifest.json.tmp-4242": "{",
                               ".coursepack-sync/downloads/junk/x": "x"], under: course)
        // The target's own state: a dead writer's temporary file goes, a live one's (pid 1) stays.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        try TestSupport.write(["target.json.tmp-\(gone.processIdentifier)": "{", "target.json.tmp-1": "{"], under: target + "/.coursepack-sync")
        let damaged = ClientTargetTests.snapshot(target)

        let status = try TestSupport.coursepack(["status", target, "--blocks"])
        #expect(status.status == 0, "\(status.stderr)")
        let manifest = try #require(try ManifestFile.read(course + "/manifest.json"))
        func id(_ name: String) throws -> String { try #require(manifest.blocks.first { $0.archive == "html/\(name).zip" }).usageID }
        for expected in ["missing: \(try id("welcome_page")): its folder is gone", "damaged: \(try id("handout_page")): index.html is 12 bytes",
                         "leftover: html/.interactive_page.new-4242-17", "leftover: .manifest.json.tmp-4242", "leftover: .coursepack-sync/downloads/junk"] {
            #expect(status.stdout.contains(expected), "\(expected) in \(status.stdout)")
        }
        #expect(!status.stdout.contains("damaged: \(try id("styled_page"))"), "same size: found only when reading")
        #expect(status.stdout.contains("  missing   html") && status.stdout.contains("  damaged   html"), "\(status.stdout)")
        let read = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(read.stdout.contains("damaged: \(try id("styled_page")): index.html does not hold the bytes it was installed with"), "\(read.stdout)")
        #expect(ClientTargetTests.differences(damaged, ClientTargetTests.snapshot(target)) == [], "status changes nothing")

        let repair = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("3 blocks downloaded"), "\(repair.stdout)")
        #expect(ClientTargetTests.differences(good, ClientTargetTests.snapshot(course + "/html")) == [])
        #expect(Self.stagingLeftovers(target) == [] && !fm.fileExists(atPath: course + "/.manifest.json.tmp-4242"))
        #expect(!fm.fileExists(atPath: course + "/.coursepack-sync/downloads/junk"))
        #expect(repair.stdout.contains(".coursepack-sync/target.json.tmp-\(gone.processIdentifier): removed"), "\(repair.stdout)")
        #expect(!fm.fileExists(atPath: target + "/.coursepack-sync/target.json.tmp-\(gone.processIdentifier)"))
        #expect(fm.fileExists(atPath: target + "/.coursepack-sync/target.json.tmp-1"))
        let clean = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!clean.stdout.contains("missing:") && !clean.stdout.contains("damaged:") && !clean.stdout.contains("leftover:"), "\(clean.stdout)")
    }

    /// A real kill, while a page of 4,000 course files unpacks: `status` shows what it left, and
    /// the next sync removes it and installs the block. Many files, not one large one: a large
    /// file is downloaded before its block is staged and linked in at once, so the staging
    /// folder lived a few milliseconds and a loaded machine's kill came after the swap.
    @Test func aSyncKilledWhileUnpackingIsRepairedByTheNextOne() throws {
        let folder = TestSupport.temporaryFolder("killed")
        let course = folder + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        var files: [String: String] = [:]
        var links = ""
        for index in 0..<4000 {
            files["static/many/\(index).txt"] = "file \(index) \(UUID().uuidString)"
            links += "<a href=\"/static/many/\(index).txt\">\(index)</a> "
        }
        try TestSupport.write(files, under: course)
        let page = course + "/html/welcome_page.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>\(links)</p>".utf8), to: page)
        let published = folder + "/published"
        #expect(try TestSupport.coursepack(["build", course, "--out", published, "-q"]).status == 0)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let welcome = try #require(manifest.blocks.first { $0.archive == "html/welcome_page.zip" })
        let handout = try #require(manifest.blocks.first { $0.archive == "html/handout_page.zip" })
        let target = folder + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target, "--blocks", handout.usageID]).status == 0)

        let html = target + exampleFolder + "/html"
        let sync = try ChildProcess(TestSupport.coursepackBinary, ["sync", published, "--to", target, "--jobs", "1"])
        let deadline = Date().addingTimeInterval(120)
        var staging: String?
        while staging == nil, sync.process.isRunning, Date() < deadline {
            staging = ((try? FileManager.default.contentsOfDirectory(atPath: html)) ?? []).first { $0.hasPrefix(".welcome_page.new-") }
            usleep(2_000)
        }
        kill(sync.pid, SIGKILL)
        #expect(sync.stop())
        let leftover = try #require(staging, "the sync was never seen unpacking the page")
        #expect(FileManager.default.fileExists(atPath: html + "/" + leftover), "killed before the block was swapped in")
        #expect(leftover.hasPrefix(".welcome_page.new-\(sync.pid)-"))

        let status = try TestSupport.coursepack(["status", target])
        #expect(status.stdout.contains("leftover: html/\(leftover): left by a sync that was killed"), "\(status.stdout)")
        let repair = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stdout.contains("html/\(leftover): removed, a half-installed block"), "\(repair.stdout)")
        #expect(Self.stagingLeftovers(target) == [])
        #expect(try ClientTargetTests.installed(target + exampleFolder).ids.contains(welcome.usageID))
        let clean = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!clean.stdout.contains("leftover:") && !clean.stdout.contains("damaged:") && !clean.stdout.contains("missing:"), "\(clean.stdout)")
    }

    /// An archive whose ZIP64 locator points near 2^64 once crashed `sync` (exit 132) after it
    /// had kept the verified download, and so every later sync too; it is a failed block now.
    @Test func aZIP64LocatorNearTwoToTheSixtyFourFailsTheBlockOnEverySync() throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        try withoutCourseFiles(published)
        let script = """
            import hashlib, json, struct, sys
            folder = sys.argv[1]
            eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
            body = bytes(100) + struct.pack("<IIQI", 0x07064b50, 0, 2**64 - 16, 1) + eocd
            open(folder + "/html/welcome_page.zip", "wb").write(body)
            manifest = json.load(open(folder + "/manifest.json"))
            for block in manifest["blocks"]:
                if block.get("archive") == "html/welcome_page.zip":
                    block["size"] = len(body)
                    block["sha256"] = hashlib.sha256(body).hexdigest()
            json.dump(manifest, open(folder + "/manifest.json", "w"))
            """
        let written = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, published])
        #expect(written.status == 0, "\(written.stderr)")
        let target = TestSupport.temporaryFolder("zip64-sync") + "/device"
        for _ in 0..<2 {
            let result = try TestSupport.coursepack(["sync", published, "--to", target])
            #expect(result.status == 1, "\(result.status): \(result.stderr)")
            #expect(result.stderr.contains("html/welcome_page.zip") && result.stderr.contains("ZIP64"), "\(result.stderr)")
            #expect(TestSupport.files(under: target + exampleFolder + "/.coursepack-sync/downloads") == [], "the refused download is not kept")
        }
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/html/handout_page/index.html"), "the other blocks are installed")
    }

    /// A link planted where a lock file goes makes the sync stop; nothing is created where it points.
    @Test(arguments: ["/.coursepack-sync/lock", exampleFolder + "/.coursepack-sync/lock"])
    func aLockPathThatIsALinkIsRefused(lock: String) throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        let folder = TestSupport.temporaryFolder("lock-link")
        let target = folder + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        try FileManager.default.removeItem(atPath: target + lock)
        try FileManager.default.createSymbolicLink(atPath: target + lock, withDestinationPath: folder + "/outside")
        let result = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(result.status == 2, "\(result.status): \(result.stdout)")
        #expect(result.stderr.contains("cannot open it to lock it"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/outside"))
    }
}

/// The sync creates files as the process's umask says; a content it moves into the store as
/// downloaded (a stored media file past 4 MiB) was set to 0644 whatever the umask, so a
/// device or server account that keeps its files private (umask 077) shared that one.
@Suite struct SyncFileModeTests {
    @Test(arguments: [0o077, 0o027] as [mode_t])
    func everyStoredContentHasTheModeTheUmaskGives(_ mask: mode_t) throws {
        let folder = TestSupport.temporaryFolder("umask")
        let course = folder + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        var video = Array(TestSupport.read(course + "/static/lecture.mp4").prefix(32))
        var generator = SystemRandomNumberGenerator()
        while video.count < 6 << 20 { video.append(UInt8.random(in: 0...255, using: &generator)) }
        try TestSupport.writeBytes(video, to: course + "/static/lecture.mp4")
        let published = try ClientTargetTests.publish(course)
        // Over HTTP: a folder source links the publish's own files into the store.
        let server = try startNginx(serving: published)
        defer { #expect(server.stop(), "nginx outlived its test") }
        let target = folder + "/device"
        let synced = try TestSupport.run(
            "/bin/sh", ["-c", "umask \(String(mask, radix: 8)) && exec \"$0\" \"$@\"", TestSupport.coursepackBinary, "sync", server.baseURL, "--to", target])
        #expect(synced.status == 0, "\(synced.stderr)")
        let stored = TestSupport.files(under: target).filter { $0.contains("/store/") }
        var sizes: [Int64] = []
        for file in stored {
            var info = stat()
            #expect(stat(target + "/" + file, &info) == 0 && info.st_mode & 0o777 == 0o644 & ~mask, "\(file): \(String(info.st_mode & 0o777, radix: 8))")
            sizes.append(Int64(info.st_size))
        }
        #expect(sizes.contains(Int64(video.count)), "the video is in the store, among \(stored.count) files")
    }
}
