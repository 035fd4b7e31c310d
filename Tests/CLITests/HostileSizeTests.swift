import Foundation
import Testing
import TestSupport

/// A device's own files are read whole only after their size is checked: a sparse 10 GB
/// `manifest.json` or `target.json` once made `status --verify` hold 21 GB before it failed.
@Suite struct HostileSizeTests {
    static let course = "CoursepackX+CP101+2026"

    func syncedTarget() throws -> (published: String, target: String) {
        let published = TestSupport.temporaryFolder("huge-state") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("huge-state") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        return (published, target)
    }

    /// The course's manifest is the sync's to repair: `status` names it and why, the next sync
    /// installs the course again from what the device still holds.
    @Test func aSparseTenGigabyteManifestIsNamedByStatusAndRepairedBySync() throws {
        let (published, target) = try syncedTarget()
        let path = target + "/\(Self.course)/manifest.json"
        #expect(truncate(path, 10 << 30) == 0)
        let status = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(status.stdout.contains("damaged: manifest.json: \(path)") && status.stdout.contains("refused unread"), "\(status.stdout)")
        let sync = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(sync.status == 0 && sync.stdout.contains("repaired"), "\(sync.stdout) \(sync.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size < 1 << 20)
        #expect(!(try TestSupport.coursepack(["status", target, "--verify"]).stdout.contains("damaged")))
    }

    /// The target's own record is not made again from anything: every command refuses it.
    @Test func aSparseTenGigabyteTargetRecordIsRefusedUnreadAndNamed() throws {
        let (published, target) = try syncedTarget()
        let path = target + "/.coursepack-sync/target.json"
        #expect(truncate(path, 10 << 30) == 0)
        for arguments in [["status", target, "--verify"], ["sync", published, "--to", target]] {
            let result = try TestSupport.coursepack(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout)")
            #expect(result.stderr.contains(path) && result.stderr.contains("refused unread"), "\(arguments): \(result.stderr)")
        }
    }

    /// A course file over the limit a client accepts is never read: a 100 GB file once took
    /// seven minutes to hash before the build did anything.
    @Test func aCourseFileOverTheLimitIsLeftOutUnreadWithAWarningNamingIt() throws {
        let course = TestSupport.temporaryFolder("huge-file") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let huge = course + "/static/huge.bin"
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 5 << 30) == 0, "a sparse 5 GiB file, over the 4 GiB limit")
        let out = TestSupport.temporaryFolder("huge-file") + "/out"
        let result = try TestSupport.coursepack(["build", course, "--out", out, "--report", out + ".json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = String(decoding: TestSupport.read(out + ".json"), as: UTF8.self)
        #expect(report.contains("CP124") && report.contains("static/huge.bin"), "\(report.prefix(2000))")
        let manifest = String(decoding: TestSupport.read(out + "/manifest.json"), as: UTF8.self)
        #expect(!manifest.contains("huge.bin"))
    }

    /// Builder and client share the limit: a client whose limit is lower refuses the publish
    /// before it downloads anything, naming the content.
    @Test func aClientRefusesACourseFileOverTheSharedLimit() throws {
        let published = TestSupport.temporaryFolder("file-limit") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("file-limit") + "/device"
        let result = try TestSupport.run("/usr/bin/env", ["COURSEPACK_LOWER_LIMITS=file=1000", TestSupport.coursepackBinary, "sync", published, "--to", target])
        #expect(result.status != 0)
        #expect(result.stderr.contains("larger than the 1000 bytes a course file may be"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target + "/\(Self.course)/manifest.json"))
    }
}
