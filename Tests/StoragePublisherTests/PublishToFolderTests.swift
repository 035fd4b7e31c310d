import Foundation
import Manifest
import StoragePublisher
import Testing
import TestSupport

/// `coursepack publish DIR --to FOLDER`: a web root gets the same order and the same checks.
struct PublishToFolderTests {
    @Test func aWebRootGetsACompletePublishAndADryRunChangesNothing() throws {
        let root = TestSupport.temporaryFolder("publish-folder")
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/course")
        #expect(try TestSupport.coursepack(["build", root + "/course", "--out", root + "/out"]).status == 0)
        let web = root + "/www/course"
        // Each course goes into its own folder of the target.
        let published = web + "/" + CourseFolder.name(for: "course-v1:CoursepackX+CP101+2026")

        let dry = try TestSupport.coursepack(["publish", root + "/out", "--to", web, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("upload    html/welcome_page.zip"), "\(dry.stdout)")
        #expect(!FileManager.default.fileExists(atPath: web))

        let first = try TestSupport.coursepack(["publish", root + "/out", "--to", web, "--report", root + "/report.json"])
        #expect(first.status == 0, "\(first.stderr)")
        let verify = try TestSupport.coursepack(["verify", published])
        #expect(verify.status == 0, "\(verify.stderr)")
        let local = try #require(try ManifestFile.read(root + "/out/manifest.json"))
        #expect(try ManifestFile.read(published + "/manifest.json") == local)
        let report = try JSONDecoder().decode(PublishReport.self, from: Data(TestSupport.read(root + "/report.json")))
        // The parts after every archive, then manifest.json, the split manifest's index last;
        // only the record and then the courses index after it.
        let parts = try #require(try PublishedManifest.read(folder: root + "/out")?.index).parts.map { "PUT " + $0.path }
        let course = report.writes.filter { !$0.contains(PublishRecord.key) && !$0.contains(CourseIndex.key) }
        #expect(Set(course.suffix(parts.count + 2).prefix(parts.count)) == Set(parts), "\(course)")
        #expect(course.suffix(2) == ["PUT manifest.json", "PUT manifest-index.json"], "\(course)")
        #expect(report.writes.last == "PUT \(CourseIndex.key)")
        #expect(report.uploads.count == local.blocks.compactMap(\.archive).count + (local.runtime == nil ? 0 : 1) + (local.search == nil ? 0 : 1) + (local.files?.count ?? 0) + parts.count)

        // A corrupted copy in the web root is found by its digest and replaced, never trusted.
        try TestSupport.writeBytes(Array("not a zip".utf8), to: published + "/html/welcome_page.zip")
        let repair = try TestSupport.coursepack(["publish", root + "/out", "--to", web, "--report", root + "/report2.json"])
        #expect(repair.status == 0, "\(repair.stderr)")
        let second = try JSONDecoder().decode(PublishReport.self, from: Data(TestSupport.read(root + "/report2.json")))
        #expect(second.uploads.map(\.key) == ["html/welcome_page.zip"])
        #expect(try TestSupport.coursepack(["verify", published]).status == 0)
    }

    /// A record in the target (written by another program, or damaged) whose pending name is
    /// nothing but the staging marker after a dot: reading it made an inverted range, and every
    /// publish to that target crashed. The name is no key a publish writes; the publish goes on.
    @Test func aRecordNamingABareStagedMarkerIsIgnored() throws {
        let root = TestSupport.temporaryFolder("publish-bare-staged")
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", root + "/out", "-q"]).status == 0)
        let published = root + "/www/" + CourseFolder.name(for: "course-v1:CoursepackX+CP101+2026")
        try FileManager.default.createDirectory(atPath: published, withIntermediateDirectories: true)
        for pending in ["html/.zip.staged-0123456789abcdef", "html/.staged-0123456789abcdef", "html/..staged-0123456789abcdef"] {
            try TestSupport.writeBytes(Array(#"{"pending":["\#(pending)"]}"#.utf8), to: published + "/" + PublishRecord.key)
            let result = try TestSupport.coursepack(["publish", root + "/out", "--to", root + "/www"])
            #expect(result.status == 0, "\(pending): \(result.status) \(result.stderr)")
            #expect(try TestSupport.coursepack(["verify", published]).status == 0)
        }
    }

    @Test func aFolderThatDoesNotMatchItsManifestIsNotPublished() throws {
        let root = TestSupport.temporaryFolder("publish-broken")
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/course")
        #expect(try TestSupport.coursepack(["build", root + "/course", "--out", root + "/out"]).status == 0)
        try FileManager.default.removeItem(atPath: root + "/out/html/welcome_page.zip")
        let result = try TestSupport.coursepack(["publish", root + "/out", "--to", root + "/www"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("html/welcome_page.zip: missing"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root + "/www/manifest.json"))

        // Same size, other bytes: found by its digest before anything is written.
        #expect(try TestSupport.coursepack(["build", root + "/course", "--out", root + "/out"]).status == 0)
        let archive = root + "/out/html/styled_page.zip"
        var bytes = TestSupport.read(archive)
        bytes[bytes.count / 2] ^= 0xFF
        try TestSupport.writeBytes(bytes, to: archive)
        let damaged = try TestSupport.coursepack(["publish", root + "/out", "--to", root + "/www"])
        #expect(damaged.status == 2)
        #expect(damaged.stderr.contains("html/styled_page.zip: sha256 is"), "\(damaged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root + "/www"))
    }
}
