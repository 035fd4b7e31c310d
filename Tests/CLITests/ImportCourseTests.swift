import Foundation
import Manifest
import Testing
import TestSupport

/// `coursepack build` and `inspect` on Open edX's own import test courses
/// (../shared/corpus/edx-platform-testdata/): each builds with exit 0 or 1, and every html and
/// problem block the LMS would import is accounted for: an archive, `offline: false` with a
/// reason, or an error naming it (its file is not in the copied corpus).
@Suite struct ImportCourseTests {
    static let corpus = TestSupport.packageRoot + "/../shared/corpus/edx-platform-testdata"

    struct Expected: Sendable, CustomStringConvertible {
        let course: String
        let status: Int32
        /// html and problem blocks published (archive or offline: false), counted by hand from the course's XML.
        let published: Int
        /// html and problem blocks whose file is missing from the copy: errors naming them.
        let failed: Int
        var description: String { course }
    }

    @Test(arguments: [
        Expected(course: "split_test_module", status: 0, published: 2, failed: 0),  // both groups' html
        Expected(course: "simple", status: 1, published: 3, failed: 1),  // toylab, test_html, ps01-simple; L1_Problem_1 missing
        Expected(course: "toy", status: 1, published: 0, failed: 1),  // html/toylab.html missing
        Expected(course: "test_import_course", status: 1, published: 0, failed: 5),  // its five html pointer files missing
        Expected(course: "conditional", status: 1, published: 2, failed: 2),  // congrats, the conditional's html; secret_page, choiceprob missing
        Expected(course: "dot-underscore", status: 1, published: 0, failed: 0),  // course/2014_Fall.xml missing
        Expected(course: "2014_Uni", status: 0, published: 0, failed: 0),
    ])
    func eachImportTestCourseBuildsAndAccountsForEveryBlock(expected: Expected) throws {
        let course = Self.corpus + "/" + expected.course
        try #require(FileManager.default.fileExists(atPath: course + "/course.xml"), "the import test corpus is missing: \(course)")
        let folder = TestSupport.temporaryFolder("import")
        let result = try TestSupport.coursepack(["build", course, "--out", folder + "/out", "--report", folder + "/report.json"])
        #expect(result.status == expected.status, "\(result.stderr)")
        let manifest = try #require(try ManifestFile.read(folder + "/out/manifest.json"))
        let content = manifest.blocks.filter { ["html", "problem"].contains($0.type) }
        #expect(content.count == expected.published)
        for block in content {
            #expect(block.archive != nil || (block.offline == false && block.reason?.isEmpty == false), "\(block.usageID)")
        }
        struct Report: Decodable {
            struct Problem: Decodable { let block: String?; let file: String?; let message: String }
            let errors: [Problem]
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(TestSupport.read(folder + "/report.json")))
        let failedContent = report.errors.filter { ($0.block ?? "").contains("+type@html+") || ($0.block ?? "").contains("+type@problem+") }
        #expect(failedContent.count == expected.failed, "\(report.errors.map(\.message))")
        for error in report.errors {
            #expect(result.stderr.contains(error.message), "each error is printed, naming its file")
            #expect(error.file?.isEmpty == false)
        }
        #expect(try TestSupport.coursepack(["verify", folder + "/out"]).status == 0)
    }

    @Test func inspectShowsSplitTestGroups() throws {
        let result = try TestSupport.coursepack(["inspect", Self.corpus + "/split_test_module"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasSuffix("split_test  split1    [user partition 0: 2 groups (0, 2)]") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasSuffix("vertical  sample_0    [split_test group 0 of user partition 0]") })
        #expect(lines.contains { $0.hasSuffix("vertical  sample_2    [split_test group 2 of user partition 0]") })
        #expect(lines.last == "4 leaf blocks: 2 discussion, 2 html")
    }

    @Test func inspectShowsGroupAccess() throws {
        let result = try TestSupport.coursepack(["inspect", TestSupport.demoCourse])
        #expect(result.status == 0, "\(result.stderr)")
        let restricted = result.stdout.split(separator: "\n").filter { $0.contains("[group_access") }
        #expect(restricted.count == 2)
        #expect(restricted.first?.hasSuffix("Visible to Content Group A  [group_access 18587404: 1819362822]") == true, "\(restricted)")
    }

    @Test func inspectReportsDuplicateNamesAsWarnings() throws {
        let course = try hostileCourse(#"<html url_name="good"/>"#)
        let result = try TestSupport.coursepack(["inspect", course])
        #expect(result.status == 0)
        #expect(result.stderr.contains(#"warning[CP120]: vertical/v.xml: url_name "good" of <html> is used again (first in vertical/v.xml)"#), "\(result.stderr)")
        #expect(!result.stdout.contains("html_good_"), "the LMS keeps one html block of that id")
    }
}
