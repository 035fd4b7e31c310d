import Foundation
import Manifest
import Testing
import TestSupport

/// The client side of a device: several courses in one target, a storage budget with pins and
/// least-recently-used eviction, prefetch, repair at start-up, and `coursepack serve`.
@Suite(.serialized) struct ClientTargetTests {
    static let demoChapter1 = "block-v1:OpenedX+DemoX+DemoCourse+type@chapter+block@30b3fbb840024953b2d4b2e700a53002"

    /// A published course folder, built once per test.
    static func publish(_ course: String) throws -> String {
        let published = TestSupport.temporaryFolder("client") + "/published"
        let built = try TestSupport.coursepack(["build", course, "--out", published, "-q"])
        #expect(built.status == 0, "\(built.stderr)")
        return published
    }

    /// Bytes the installed blocks' and runtimes' files take, counted from the disk (not from
    /// the client's own records), with the usage ids whose folders are there.
    static func installed(_ courseRoot: String) throws -> (bytes: UInt64, ids: Set<String>) {
        let manifest = try #require(try ManifestFile.read(courseRoot + "/manifest.json"))
        var bytes: UInt64 = 0
        var ids = Set<String>()
        var folders: [(String?, String)] = manifest.blocks.compactMap { block in block.archive.map { (block.usageID, String($0.dropLast(4))) } }
        if let runtime = manifest.runtime { folders.append((nil, String(runtime.archive.dropLast(4)))) }
        for (id, folder) in folders {
            let path = courseRoot + "/" + folder
            guard FileManager.default.fileExists(atPath: path) else { continue }
            if let id { ids.insert(id) }
            for file in TestSupport.files(under: path) {
                bytes += UInt64((try? FileManager.default.attributesOfItem(atPath: path + "/" + file)[.size] as? UInt64) ?? 0)
            }
        }
        return (bytes, ids)
    }

    static func targetState(_ target: String) throws -> [String: Any] {
        let data = Data(TestSupport.read(target + "/.coursepack-sync/target.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func lastUse(_ target: String, course: String) throws -> [String: Double] {
        let courses = try #require(try targetState(target)["courses"] as? [String: Any])
        let record = try #require(courses[course] as? [String: Any])
        return (record["last_use"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.doubleValue }
    }

    /// Every file under `root` with its bytes: to show that nothing changed.
    static func snapshot(_ root: String) -> [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: TestSupport.files(under: root).map { ($0, TestSupport.read(root + "/" + $0)) })
    }

    /// The files of `now` that differ from `before` (added, removed or changed), named.
    static func differences(_ before: [String: [UInt8]], _ now: [String: [UInt8]]) -> [String] {
        Set(before.keys).union(now.keys).filter { before[$0] != now[$0] }.sorted()
    }

    @Test func aBudgetSmallerThanTheDemoCourseKeepsThePinnedChapterAndEvictsTheLeastRecentlyOpened() throws {
        let published = try Self.publish(TestSupport.demoCourse)
        let target = TestSupport.temporaryFolder("client") + "/device"
        let full = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(full.status == 0, "\(full.stderr)")
        let courseRoot = target + demoFolder
        let before = try Self.installed(courseRoot)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let offline = manifest.blocks.filter { $0.archive != nil }
        #expect(before.ids.count == offline.count)

        // A learner opens two pages of the last chapter, after everything was installed.
        let opened = offline.suffix(2).map(\.usageID)
        for id in opened {
            usleep(20_000)
            let open = try TestSupport.coursepack(["open", target, id])
            #expect(open.status == 0, "\(open.stderr)")
            #expect(open.stdout.hasPrefix(courseRoot + "/html/"), "\(open.stdout)")
            #expect(FileManager.default.fileExists(atPath: open.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let usedBefore = try Self.lastUse(target, course: String(demoFolder.dropFirst()))

        let budget: UInt64 = 8_000_000
        #expect(before.bytes > budget, "the demo course must not fit, or the test shows nothing")
        let limited = try TestSupport.coursepack(["sync", published, "--to", target, "--budget", "8MB", "--pin", Self.demoChapter1])
        #expect(limited.status == 0, "\(limited.stderr)")
        #expect(limited.stdout.contains("evicted (least recently used)"), "\(limited.stdout)")
        let after = try Self.installed(courseRoot)
        #expect(after.bytes <= budget, "\(after.bytes) bytes installed, budget \(budget)")
        #expect(try Self.diskBytes(target) <= budget, "the whole target holds to the budget")
        let pinned = Set(offline.filter { $0.parents.contains(Self.demoChapter1) }.map(\.usageID))
        #expect(!pinned.isEmpty)
        #expect(pinned.isSubset(of: after.ids), "every block of the pinned chapter stays")
        #expect(Set(opened).isSubset(of: after.ids), "the most recently opened stay")
        let evicted = before.ids.subtracting(after.ids)
        let keptUnpinned = after.ids.subtracting(pinned)
        #expect(!evicted.isEmpty && !keptUnpinned.isEmpty)
        let newestEvicted = evicted.compactMap { usedBefore[$0] }.max() ?? 0
        let oldestKept = keptUnpinned.compactMap { usedBefore[$0] }.min() ?? 0
        #expect(newestEvicted <= oldestKept, "no evicted block was used more recently than a kept one")
        // The local manifest and the outline say what is there.
        let local = try #require(try ManifestFile.read(courseRoot + "/manifest.json"))
        #expect(Set(local.blocks.filter { $0.archive != nil }.map(\.usageID)) == after.ids)
        let outline = String(decoding: TestSupport.read(courseRoot + "/index.html"), as: UTF8.self)
        #expect(outline.components(separatedBy: "(not on this device)").count - 1 == evicted.count)

        // The budget stays with the target; a sync without flags keeps within it.
        let again = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.installed(courseRoot).bytes <= budget)
        let resynced = try Self.diskBytes(target)
        #expect(resynced <= budget, "du -sb \(resynced) > \(budget)")
        let status = try TestSupport.coursepack(["status", target])
        #expect(status.stdout.contains("budget: 8000000 bytes"), "\(status.stdout)")
        #expect(status.stdout.contains("pins: \(Self.demoChapter1)"), "\(status.stdout)")
        // The budget holds the whole target: the state the first sync shrank (fewer blocks
        // recorded, a shorter table of where they are: 38 KB less) may leave room for a few
        // more small blocks, never fewer.
        let present = try Self.installed(courseRoot).ids
        #expect(after.ids.isSubset(of: present) && present.count <= after.ids.count + 10, "\(after.ids.count) then \(present.count)")
        #expect(status.stdout.contains("\(present.count) blocks present of \(offline.count) offline"), "\(status.stdout)")
    }

    @Test func prefetchInstallsExactlyTheNextNBlocksInCourseOrder() throws {
        let published = try Self.publish(TestSupport.exampleCourse)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let offline = manifest.blocks.filter { $0.archive != nil }
        #expect(offline.count >= 7)
        let target = TestSupport.temporaryFolder("client") + "/device"
        let result = try TestSupport.coursepack(["sync", published, "--to", target, "--next", "3", "--after", offline[1].usageID])
        #expect(result.status == 0, "\(result.stderr)")
        let installed = try Self.installed(target + exampleFolder)
        #expect(installed.ids == Set(offline[2..<5].map(\.usageID)), "\(installed.ids)")
        // The next step moves on: the three after the last one read, the earlier ones stay.
        let more = try TestSupport.coursepack(["sync", published, "--to", target, "--next", "2", "--after", offline[4].usageID])
        #expect(more.status == 0, "\(more.stderr)")
        #expect(try Self.installed(target + exampleFolder).ids == Set(offline[2..<7].map(\.usageID)))
    }

    @Test func aDamagedInstallIsRepairedByTheNextSync() throws {
        let published = try Self.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("client") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let course = target + exampleFolder
        let good = Self.snapshot(course + "/html")
        let goodVideo = Self.snapshot(course + "/video")
        let fm = FileManager.default

        // A deleted file, a file changed in place (same size), a stray folder, a stray course
        // folder, and a block a killed sync left half-written.
        try fm.removeItem(atPath: course + "/html/welcome_page/index.html")
        var page = TestSupport.read(course + "/html/handout_page/index.html")
        page[page.count / 2] ^= 0x20
        try TestSupport.writeBytes(page, to: course + "/html/handout_page/index.html")
        try TestSupport.write(["html/stray/index.html": "<p>not from the manifest</p>", "leftovers/x.txt": "x"], under: course)
        try TestSupport.write(["old-course/index.html": "<p>gone</p>"], under: target)
        try TestSupport.write(["video/.lecture_video.new-99-12345/index.html": "<p>half"], under: course)

        let repair = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(repair.status == 0, "\(repair.stderr)")
        for expected in ["html/welcome_page: index.html is missing", "html/handout_page: index.html does not hold the bytes",
                         "html/stray: removed", "leftovers: removed", "removed old-course: no course of this target", "video/.lecture_video.new-99-12345: removed, a half-installed block"] {
            #expect(repair.stdout.contains(expected), "\(expected) in \(repair.stdout)")
        }
        #expect(repair.stdout.contains("2 blocks downloaded"), "\(repair.stdout)")
        #expect(Self.differences(good, Self.snapshot(course + "/html")) == [])
        #expect(Self.differences(goodVideo, Self.snapshot(course + "/video")) == [])
        #expect(!fm.fileExists(atPath: target + "/old-course"))
        #expect(!fm.fileExists(atPath: course + "/leftovers"))

        // Nothing left to repair: the next sync reports none.
        let clean = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(!clean.stdout.contains("repaired"), "\(clean.stdout)")
        #expect(clean.stdout.contains("0 blocks downloaded"), "\(clean.stdout)")
    }

    /// `du -sb`: what the budget holds.
    static func diskBytes(_ path: String) throws -> UInt64 {
        UInt64(try TestSupport.run("/usr/bin/du", ["-sb", path]).stdout.split(separator: "\t").first ?? "") ?? 0
    }

    @Test func twoCoursesShareOneTargetAndItsBudget() throws {
        let demo = try Self.publish(TestSupport.demoCourse)
        let example = try Self.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("client") + "/device"
        #expect(try TestSupport.coursepack(["sync", example, "--to", target]).status == 0)
        let exampleBytes = try Self.installed(target + exampleFolder).bytes
        // The budget holds the whole target (du -sb): the demo course's manifests, runtime,
        // search index and pages take about 4.5 MB before any of its blocks.
        let budget = try Self.diskBytes(target) + 6_000_000
        let second = try TestSupport.coursepack(["sync", demo, "--to", target, "--budget", String(budget)])
        #expect(second.status == 0, "\(second.stderr)")
        let (_, demoIDs) = try Self.installed(target + demoFolder)
        let now = try Self.installed(target + exampleFolder).bytes
        let disk = try Self.diskBytes(target)
        #expect(disk <= budget, "du -sb \(disk) > \(budget)")
        #expect(now == exampleBytes, "the first course's blocks were used more recently than any new one and stay")
        #expect(!demoIDs.isEmpty)

        // Prefetching the demo course now needs room: the example course's blocks, used least
        // recently, go, and the total stays within the one budget.
        let demoManifest = try #require(try ManifestFile.read(demo + "/manifest.json"))
        let first = try #require(demoManifest.blocks.first)
        let prefetch = try TestSupport.coursepack(["sync", demo, "--to", target, "--next", "80", "--after", first.usageID])
        #expect(prefetch.status == 0, "\(prefetch.stderr)")
        let exampleAfter = try Self.installed(target + exampleFolder).bytes
        #expect(try Self.diskBytes(target) <= budget)
        #expect(exampleAfter < exampleBytes, "the other course's least recently used blocks made room")

        let status = try TestSupport.coursepack(["status", target])
        #expect(status.stdout.contains("2 courses"), "\(status.stdout)")
        #expect(status.stdout.contains("course CoursepackX+CP101+2026") && status.stdout.contains("course OpenedX+DemoX+DemoCourse"))
        let index = String(decoding: TestSupport.read(target + "/index.html"), as: UTF8.self)
        #expect(index.contains("href=\"CoursepackX+CP101+2026/index.html\"") && index.contains("href=\"OpenedX+DemoX+DemoCourse/index.html\""))
    }

    @Test func badInputExitsTwoAndChangesNothing() throws {
        let published = try Self.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("client") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target, "--blocks", "block-v1:CoursepackX+CP101+2026+type@chapter+block@media"]).status == 0)
        let before = Self.snapshot(target)

        let cases: [([String], String)] = [
            (["sync", published, "--to", target, "--budget", "lots"], "--budget \"lots\" is not a size"),
            (["sync", published, "--to", target, "--pin", "block-v1:CoursepackX+CP101+2026+type@chapter+block@nope"], "no such block or container"),
            (["sync", published, "--to", target, "--budget", "1kB", "--pin", "course-v1:CoursepackX+CP101+2026"], "bytes over the budget of 1000 bytes"),
            (["sync", published, "--to", target, "--next", "2"], "--next and --after go together"),
            (["open", target, "block-v1:CoursepackX+CP101+2026+type@html+block@nope"], "no such block"),
        ]
        for (arguments, message) in cases {
            let result = try TestSupport.coursepack(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(Self.differences(before, Self.snapshot(target)) == [], "\(arguments) changed the target")
        }

        // A folder that is not a coursepack target is left alone by every client command.
        let other = TestSupport.temporaryFolder("client")
        try TestSupport.write(["notes.txt": "mine"], under: other)
        for arguments in [["sync", published, "--to", other], ["status", other], ["open", other, "x"], ["serve", other]] {
            let result = try TestSupport.coursepack(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("not a coursepack target"), "\(arguments): \(result.stderr)")
        }
        #expect(TestSupport.files(under: other) == ["notes.txt"])
    }

    /// One lock for the whole target: a sync of another course waits for nobody and changes nothing.
    @Test func aSecondSyncIntoTheTargetIsRefusedWhileOneRuns() throws {
        let python = try #require(TestSupport.which("python3"))
        let example = try Self.publish(TestSupport.exampleCourse)
        let other = try Self.publish(TestSupport.demoCourse)
        let target = TestSupport.temporaryFolder("client") + "/device"
        #expect(try TestSupport.coursepack(["sync", example, "--to", target]).status == 0)
        let before = Self.snapshot(target)
        // One process holds the target's lock as a running sync does.
        let marker = TestSupport.temporaryFolder("lock") + "/held"
        let holder = try ChildProcess(python, ["-c", """
            import fcntl, os, sys, time
            f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[2], "w").close()
            parent = os.getppid()
            while os.getppid() == parent: time.sleep(0.1)  # held until stopped, or until the test process dies
            """, target + "/.coursepack-sync/lock", marker])
        defer { #expect(holder.stop(), "the lock holder outlived its test") }
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: marker) { usleep(50_000) }
        #expect(FileManager.default.fileExists(atPath: marker))
        let refused = try TestSupport.coursepack(["sync", other, "--to", target])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("another sync into this target is running"), "\(refused.stderr)")
        #expect(Self.differences(before, Self.snapshot(target)) == [])
    }

    /// A folder synced by the single-course client is moved into its course folder, once.
    @Test func aSingleCourseTargetIsMigratedExplicitly() throws {
        let published = try Self.publish(TestSupport.exampleCourse)
        let target = TestSupport.temporaryFolder("client") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        // The old layout: the course folder's content at the top.
        let course = target + exampleFolder
        try FileManager.default.removeItem(atPath: target + "/.coursepack-sync")
        try FileManager.default.removeItem(atPath: target + "/index.html")
        for name in try FileManager.default.contentsOfDirectory(atPath: course) where ![".coursepack-sync", "index.html", "_navigation"].contains(name) {
            try FileManager.default.moveItem(atPath: course + "/" + name, toPath: target + "/" + name)
        }
        try FileManager.default.removeItem(atPath: course)
        let old = Self.snapshot(target + "/html")

        let migrated = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("moved the course synced here before into"), "\(migrated.stdout)")
        #expect(migrated.stdout.contains("0 blocks downloaded"), "nothing is downloaded again: \(migrated.stdout)")
        #expect(Self.differences(old, Self.snapshot(course + "/html")) == [])
        #expect(!FileManager.default.fileExists(atPath: target + "/manifest.json"))
        #expect(FileManager.default.fileExists(atPath: course + "/index.html"), "the outline is written")
        let status = try TestSupport.coursepack(["status", target])
        #expect(status.stdout.contains("course CoursepackX+CP101+2026"), "\(status.stdout)")
    }
}
