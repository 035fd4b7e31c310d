import FileSystem
import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// A rebuild reads the previous publish while the course loads (with more than one job), so it
/// takes the output's lock before either: another build holding it may be replacing the
/// manifest at that moment.
@Suite struct BuildLockTests {
    static let time = "2026-11-22T10:00:00Z"

    @Test(arguments: [1, 2])
    func aRebuildTakesTheLockBeforeItReadsThePreviousPublish(jobs: Int) throws {
        let (out, _) = try build(TestSupport.exampleCourse, jobs: jobs)
        let published = try Data(contentsOf: URL(fileURLWithPath: out + "/manifest-index.json"))
        let held = try FileLock(.folder(out), waiting: .none)
        // What another build could leave for an instant: a reader that did not wait would be
        // refused for a damaged manifest, not told the output is busy.
        try Data("{\"torn".utf8).write(to: URL(fileURLWithPath: out + "/manifest-index.json"))
        let options = try BuildOptions(outputFolder: out, publishedAt: Self.time, jobs: jobs, lockTimeout: 0)
        let refused = #expect(throws: BuildError.self) { _ = try CoursePackager(options: options).build(coursePath: TestSupport.exampleCourse) }
        #expect(refused?.diagnosticID == .outputBusy, "\(String(describing: refused))")
        try published.write(to: URL(fileURLWithPath: out + "/manifest-index.json"))
        withExtendedLifetime(held) {}
    }

    /// An edited course rebuilt while another build holds the lock: it waits, then reads the
    /// publish that build left (not what was there while it waited), and ends as a fresh build
    /// of the edited course does.
    @Test func aRebuildWaitsForTheLockAndEndsAsAFreshBuild() throws {
        let course = TestSupport.temporaryFolder("course")
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let (out, _) = try build(course, jobs: 2, now: TestSupport.clockAhead)
        // Without its record, the rebuild does not look at the output (under the lock) to see
        // whether anything changed: the lock it takes to read the previous publish is its first.
        #expect(unlink(out + ".coursepack-state/record.bin") == 0)
        let page = URL(fileURLWithPath: course + "/html/handout_page.html")
        try (String(contentsOf: page, encoding: .utf8) + "\n<p>Edited while another build held the lock.</p>\n").write(to: page, atomically: true, encoding: .utf8)

        // The build holding the lock has the manifest torn, then puts it back and lets go: a
        // rebuild that read it before the lock would be refused for a damaged manifest.
        let manifests = ["manifest.json", "manifest-index.json"].map { URL(fileURLWithPath: out + "/" + $0) }
        let published = try manifests.map { try Data(contentsOf: $0) }
        let locked = DispatchSemaphore(value: 0)
        // A thread of its own: one of the dispatch pool's, asleep, could hold back the rebuild's
        // own work on a small machine.
        Thread.detachNewThread {
            let held = try? FileLock(.folder(out), waiting: .none)
            for manifest in manifests { try? Data("{\"torn".utf8).write(to: manifest) }
            locked.signal()
            Thread.sleep(forTimeInterval: 0.5)
            for (manifest, bytes) in zip(manifests, published) { try? bytes.write(to: manifest) }
            withExtendedLifetime(held) {}
        }
        locked.wait()
        let waited = Date()
        var options = try BuildOptions(outputFolder: out, publishedAt: Self.time, jobs: 2, lockTimeout: 30)
        options.now = TestSupport.clockAhead
        let report = try CoursePackager(options: options).build(coursePath: course)
        #expect(Date().timeIntervalSince(waited) >= 0.4, "the rebuild went ahead while the lock was held")
        #expect(report.counts.failed == 0 && report.counts.rendered >= 1 && report.counts.reused > 0, "\(report.counts)")

        let (fresh, _) = try build(course, jobs: 2, now: TestSupport.clockAhead)
        for file in ["manifest.json", "manifest-index.json"] {
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: out + "/" + file)) == Data(contentsOf: URL(fileURLWithPath: fresh + "/" + file)),
                "\(file) differs from a fresh build's")
        }
    }
}
