import Foundation
import Manifest
import StoragePublisher
import Testing
import TestSupport

/// Several courses published to one target: each lives in its own folder, survives the others'
/// publishes and grace-period deletions, and the target's courses.json lists them all. A flat
/// publish never replaces another course's manifest.
@Suite(.serialized)
struct SharedTargetTests {
    static let courseA = "course-v1:CoursepackX+CP101+2026"
    static let courseB = "course-v1:OtherX+CP101+2026"

    /// Builds of two courses: the example course, and a copy of it under another organisation.
    static func twoCourses(_ label: String) throws -> (root: String, a: String, b: String) {
        let root = TestSupport.temporaryFolder(label)
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/course-a")
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/course-b")
        try TestSupport.write(["course.xml": "<course url_name=\"2026\" org=\"OtherX\" course=\"CP101\"/>\n"], under: root + "/course-b")
        for name in ["a", "b"] {
            let build = try TestSupport.coursepack(["build", root + "/course-\(name)", "--out", root + "/out-\(name)"])
            #expect(build.status == 0, "\(build.stderr)")
        }
        #expect(try ManifestFile.read(root + "/out-b/manifest.json")?.courseID == courseB)
        return (root, root + "/out-a", root + "/out-b")
    }

    /// Drops the handout block from a course and rebuilds it: its archive becomes removed.
    static func dropHandout(_ root: String, _ name: String) throws {
        let unit = root + "/course-\(name)/vertical/media_unit.xml"
        let text = String(decoding: TestSupport.read(unit), as: UTF8.self).replacingOccurrences(of: "<html url_name=\"handout_page\"/>", with: "")
        try TestSupport.write(["vertical/media_unit.xml": text], under: root + "/course-\(name)")
        #expect(try TestSupport.coursepack(["build", root + "/course-\(name)", "--out", root + "/out-\(name)"]).status == 0)
    }

    static func index(_ web: String) throws -> CourseIndex {
        try JSONDecoder().decode(CourseIndex.self, from: Data(TestSupport.read(web + "/courses.json")))
    }

    /// Every archive a published folder's manifest names is there and matches it.
    static func verified(_ folder: String) throws -> Bool {
        try TestSupport.coursepack(["verify", folder]).status == 0
    }

    @Test func twoCoursesInOneFolderTargetEachSurviveTheOthersPublishAndDeletions() throws {
        let (root, outA, outB) = try Self.twoCourses("shared-folder")
        let web = root + "/www"
        let folderA = web + "/" + CourseFolder.name(for: Self.courseA)
        let folderB = web + "/" + CourseFolder.name(for: Self.courseB)

        let first = try TestSupport.coursepack(["publish", outA, "--to", web, "--report", root + "/a.json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("manifest at \(folderA)/manifest.json"), "\(first.stdout)")
        let report = try JSONDecoder().decode(PublishReport.self, from: Data(TestSupport.read(root + "/a.json")))
        #expect(report.courseID == Self.courseA && report.manifest == folderA + "/manifest.json" && report.coursePrefix == CourseFolder.name(for: Self.courseA))
        #expect(try TestSupport.coursepack(["publish", outB, "--to", web, "--keep-removed", "0s"]).status == 0)
        #expect(try ManifestFile.read(folderA + "/manifest.json")?.courseID == Self.courseA)
        #expect(try ManifestFile.read(folderB + "/manifest.json")?.courseID == Self.courseB)
        #expect(try Self.verified(folderA) && Self.verified(folderB))
        #expect(!FileManager.default.fileExists(atPath: web + "/manifest.json"))
        let index = try Self.index(web)
        #expect(Set(index.courses.keys) == [Self.courseA, Self.courseB])
        #expect(index.courses[Self.courseA]?.manifest == CourseFolder.name(for: Self.courseA) + "/manifest.json")

        // A drops a block; with no grace period its archive goes at once, and only A's.
        try Self.dropHandout(root, "a")
        #expect(try TestSupport.coursepack(["publish", outA, "--to", web, "--keep-removed", "0s"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: folderA + "/html/handout_page.zip"))
        #expect(FileManager.default.fileExists(atPath: folderB + "/html/handout_page.zip"))
        #expect(try Self.verified(folderA) && Self.verified(folderB))
        // B republished with no grace period: nothing of A is touched.
        let filesA = TestSupport.files(under: folderA)
        #expect(try TestSupport.coursepack(["publish", outB, "--to", web, "--keep-removed", "0s"]).status == 0)
        #expect(TestSupport.files(under: folderA) == filesA)
        #expect(try Self.verified(folderA) && Self.verified(folderB))
        #expect(Set(try Self.index(web).courses.keys) == [Self.courseA, Self.courseB])

        // A device syncs each course from its own folder.
        let device = root + "/device"
        for folder in [folderA, folderB] {
            let sync = try TestSupport.coursepack(["sync", folder, "--to", device])
            #expect(sync.status == 0, "\(sync.stderr)")
        }
    }

    @Test func aFlatPublishOverAnotherCourseIsRefusedAndChangesNothing() throws {
        let (root, outA, outB) = try Self.twoCourses("shared-flat")
        let web = root + "/www"
        #expect(try TestSupport.coursepack(["publish", outA, "--to", web, "--flat"]).status == 0)
        #expect(try ManifestFile.read(web + "/manifest.json")?.courseID == Self.courseA)
        let before = PublishLocalFilesTests.snapshot(web)
        for extra in [[], ["--dry-run"], ["--keep-removed", "0s"]] {
            let refused = try TestSupport.coursepack(["publish", outB, "--to", web, "--flat"] + extra)
            #expect(refused.status == 2, "\(extra): \(refused.stdout)")
            #expect(refused.stderr.contains("\(web)/manifest.json is the manifest of course \(Self.courseA), not \(Self.courseB)"), "\(refused.stderr)")
            #expect(PublishLocalFilesTests.snapshot(web) == before, "\(extra) changed the target")
        }
        // B's own folder beside A's flat publish is fine, and A's flat publish stays whole.
        let beside = try TestSupport.coursepack(["publish", outB, "--to", web, "--keep-removed", "0s"])
        #expect(beside.status == 0, "\(beside.stderr)")
        #expect(try Self.verified(web) && Self.verified(web + "/" + CourseFolder.name(for: Self.courseB)))
        #expect(try Self.index(web).courses[Self.courseA]?.prefix == "")

        // A's own later publish in its folder warns that clients pointed at the flat copy keep it.
        let moved = try TestSupport.coursepack(["publish", outA, "--to", web])
        #expect(moved.status == 0 && moved.stderr.contains("earlier flat publish of \(Self.courseA)"), "\(moved.stderr)")
    }

    @Test func aRecordNamingAnotherCoursesFilesDeletesNothingOfIt() throws {
        let (root, outA, outB) = try Self.twoCourses("shared-record")
        let web = root + "/www"
        let prefixB = CourseFolder.name(for: Self.courseB)
        #expect(try TestSupport.coursepack(["publish", outB, "--to", web]).status == 0)
        #expect(try TestSupport.coursepack(["publish", outA, "--to", web, "--flat"]).status == 0)
        // A damaged (or hand-edited) root record naming B's files, the index and a manifest as
        // removed long ago: none of them is an archive of A's, so none is deleted.
        let record = PublishRecord(removed: [
            prefixB + "/html/welcome_page.zip": "2000-01-01T00:00:00.000Z",
            prefixB + "/manifest.json": "2000-01-01T00:00:00.000Z",
            "courses.json": "2000-01-01T00:00:00.000Z",
            "../outside.zip": "2000-01-01T00:00:00.000Z",
        ])
        let encoder = JSONEncoder()
        try encoder.encode(record).write(to: URL(fileURLWithPath: web + "/" + PublishRecord.key))
        try TestSupport.write(["outside.zip": "outside"], under: root)
        let again = try TestSupport.coursepack(["publish", outA, "--to", web, "--flat", "--keep-removed", "0s"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.verified(web + "/" + prefixB))
        #expect(FileManager.default.fileExists(atPath: web + "/courses.json"))
        #expect(FileManager.default.fileExists(atPath: root + "/outside.zip"))
    }

    @Test func twoCoursesInOneS3TargetEachSurviveTheOthersPublishAndDeletions() async throws {
        let moto = try MotoServer(checkingSignatures: true)
        defer { PublishToS3Tests.stop(moto) }
        let (root, outA, outB) = try Self.twoCourses("shared-s3")
        let credentials = PublishToS3Tests.credentials(moto)
        func publish(_ out: String, _ extra: [String] = [], prefix: String = "shared") throws -> PublishToS3Tests.Run {
            try PublishToS3Tests.coursepack(PublishToS3Tests.publishArguments(out, moto, prefix: prefix, extra), environment: credentials)
        }
        let storeA = PublishToS3Tests.store(moto, prefix: "shared/" + CourseFolder.name(for: Self.courseA))
        let storeB = PublishToS3Tests.store(moto, prefix: "shared/" + CourseFolder.name(for: Self.courseB))
        let first = try publish(outA)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("manifest at s3://\(moto.bucket)/shared/\(CourseFolder.name(for: Self.courseA))/manifest.json"), "\(first.stdout)")
        #expect(try publish(outB, ["--keep-removed", "0s"]).status == 0)
        for (store, course) in [(storeA, Self.courseA), (storeB, Self.courseB)] {
            let manifest = try ManifestFile.decode(try #require(try await store.get("manifest.json")), path: store.location)
            #expect(manifest.courseID == course)
            #expect(try await PublishToS3Tests.remoteProblems(store).isEmpty)
        }

        try Self.dropHandout(root, "a")
        #expect(try publish(outA, ["--keep-removed", "0s"]).status == 0)
        #expect(try await storeA.head("html/handout_page.zip") == nil)
        #expect(try await storeB.head("html/handout_page.zip") != nil)
        #expect(try publish(outB, ["--keep-removed", "0s"]).status == 0)
        #expect(try await PublishToS3Tests.remoteProblems(storeA).isEmpty)
        #expect(try await PublishToS3Tests.remoteProblems(storeB).isEmpty)
        let indexData = try #require(try await PublishToS3Tests.store(moto, prefix: "shared").get(CourseIndex.key))
        #expect(Set(try JSONDecoder().decode(CourseIndex.self, from: indexData).courses.keys) == [Self.courseA, Self.courseB])

        // B published flat into A's folder: refused, and not one request writes.
        moto.clearLog()
        let refused = try publish(outB, ["--flat", "--keep-removed", "0s"], prefix: "shared/" + CourseFolder.name(for: Self.courseA))
        #expect(refused.status == 2 && refused.stderr.contains("is the manifest of course \(Self.courseA)"), "\(refused.stderr)")
        #expect(moto.writes().isEmpty, "\(moto.writes())")
        #expect(try await PublishToS3Tests.remoteProblems(storeA).isEmpty)
    }

    @Test func courseFolderNamesAreDistinctURLSafeAndStable() {
        let pairs = [
            ("course-v1:A+B+C", "course-v1_A+B+C"), ("course-v1:A+B+C", "course-v1:a+b+c"), ("A/B/C", "A_B_C"), ("A/B/C", "A_2FB_2FC"),
            ("é", "e\u{301}"), (".hidden", "_hidden"), (String(repeating: "x", count: 300), String(repeating: "x", count: 299) + "y"),
        ]
        for (one, other) in pairs {
            #expect(CourseFolder.name(for: one) != CourseFolder.name(for: other), "\(one) / \(other)")
        }
        for id in pairs.flatMap({ [$0.0, $0.1] }) + ["..", ".", "", "a/../b", "x\u{0}y"] {
            let name = CourseFolder.name(for: id)
            #expect(name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }, "\(name)")
            #expect(!name.hasPrefix(".") && name.utf8.count <= 200, "\(name)")
        }
        // Documented in docs/publishing.md: the demo course's folder.
        #expect(CourseFolder.name(for: "course-v1:OpenedX+DemoX+DemoCourse").hasPrefix("course-v1_3AOpenedX_2BDemoX_2BDemoCourse-"))
    }
}
