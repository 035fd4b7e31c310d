import CourseExport
import Foundation
import Testing
import TestSupport

/// Open edX's own import test courses (edx-platform `common/test/data/`, copied to
/// ../shared/corpus/edx-platform-testdata/; its README says what each exercises and which of
/// their files were not copied). Each test says what the LMS import reads, and names every
/// place where coursepack reads it differently.
@Suite struct ImportTestCourseTests {
    static let corpus = TestSupport.packageRoot + "/../shared/corpus/edx-platform-testdata"

    func load(_ name: String) throws -> Course {
        let path = Self.corpus + "/" + name
        try #require(FileManager.default.fileExists(atPath: path + "/course.xml"), "the import test corpus is missing: \(path)")
        return try CourseLoader.load(try ExportDirectory(root: path))
    }

    func names(_ course: Course, _ type: String) -> [String] {
        course.blocks.filter { $0.type == type }.map(\.urlName)
    }

    @Test func splitTestModuleHasBothGroupsEachWithItsGroup() throws {
        let course = try load("split_test_module")
        // Inline course.xml (it has children), as the LMS reads it.
        #expect(course.id == "course-v1:split_test+split_test+split_test_course")
        let split = "block-v1:split_test+split_test+split_test_course+type@split_test+block@split1"
        let groups = course.blocks.filter { $0.type == "html" }.map { $0.splitTestGroup }
        #expect(groups == [
            SplitTestGroup(splitTest: split, userPartitionID: 0, groupID: 0),
            SplitTestGroup(splitTest: split, userPartitionID: 0, groupID: 2),
        ])
        #expect(course.blocks.filter { $0.type == "discussion" }.map(\.groupAccess) == [[0: [0]], [0: [2]]])
        #expect(course.issues == [] && course.warnings == [])
    }

    /// As the LMS: an inline block with no name of any kind is named `TYPE_` + 12 hex digits
    /// of the SHA-1 of lxml's serialisation of the element (values from Tests/olx's walk; a
    /// split test's children are serialised as ASCII).
    @Test func unnamedInlineBlocksGetTheLMSsSHA1Names() throws {
        let course = try load("split_test_module")
        #expect(course.blocks.map(\.urlName) == [
            "split_test_course", "chapter_a8825eec9a0e", "sequential_75662bca025c", "vertical_747204c9dabe", "split1",
            "sample_0", "html_bf4544cf1d0d", "discussion_e40ca2d3708e", "sample_2", "html_c76d7782a8d6", "discussion_b69896acda27",
        ])
    }

    @Test func simpleInlineCourseReadsLegacyNamesAndFilenames() throws {
        let course = try load("simple")
        #expect(course.id == "course-v1:edX+simple+2012_Fall")
        #expect(course.displayName == "A Simple Course")
        // <html display_name="toylab" filename="toylab"/> → html/toylab.html, named from display_name.
        let toylab = try #require(course.blocks.first { $0.type == "html" && $0.urlName == "toylab" })
        #expect(toylab.htmlFile == "html/toylab.html")
        // <video name="S0V1: Video Resources"> is named from `name`, cleaned as opaque-keys does.
        #expect(names(course, "video").contains("S0V1_Video_Resources"))
        // <problem filename="ps01-simple" url_name="ps01-simple"/> reads problem/ps01-simple.xml.
        #expect(course.blocks.first { $0.urlName == "ps01-simple" }?.file == "problem/ps01-simple.xml")
        #expect(names(course, "html").contains("test_html") && names(course, "discussion") == ["custom_id"])
        // problem/L1_Problem_1.xml is not in the copy: the LMS import fails that block too.
        #expect(course.issues.map(\.message) == [#"<problem filename="L1_Problem_1"/> points to problem/L1_Problem_1.xml, which is missing"#])
    }

    @Test func toyReadsItsInlineCourseXMLAndVideosequence() throws {
        let course = try load("toy")
        // toy's course.xml (the newer stored version) is inline with slug="2012_Fall": the LMS
        // reads it and never opens course/2012_Fall.xml, and neither does coursepack.
        #expect(course.id == "course-v1:edX+toy+2012_Fall")
        #expect(course.blocks.map(\.type) == ["course", "chapter", "videosequence", "html", "video", "video"])
        #expect(names(course, "videosequence") == ["Toy_Videos"])
        // html/toylab.html is not in the copy; the renderer reports it (as the LMS's load does).
        #expect(course.blocks.first { $0.type == "html" }?.htmlFile == "html/toylab.html")
        #expect(course.issues == [])
        // The display name comes from policies/2012_Fall.json, the old policy location.
        #expect(course.displayName == "Toy Course")
    }

    @Test func testImportCourseReadsFilenameSequentialsAndReportsItsMissingFiles() throws {
        let course = try load("test_import_course")
        #expect(!course.blocks.contains { $0.type == "textbook" }, "a course's <textbook> is a setting, as in the LMS")
        // chapter/vertical_container.xml has a <sequential> root: the LMS takes the type from
        // the pointer, and so does coursepack.
        #expect(names(course, "chapter").contains("vertical_container"))
        for file in ["html/toyjumpto.xml", "chapter/poll_test.xml", "html/secret/toylab.xml"] {
            #expect(course.issues.contains { $0.message.hasSuffix("points to \(file), which is missing") }, "\(file)")
        }
        #expect(course.issues.contains { $0.message == #"<sequential filename="vertical_sequential"/> points to sequential/vertical_sequential.xml, which is missing"# })
        #expect(course.issues.count == 9)
    }

    /// Difference from the LMS: the LMS shows a conditional's children only once its condition
    /// holds for the learner; coursepack publishes them and leaves the condition to the LMS.
    @Test func conditionalChildrenArePublishedAndShowIsNotABlock() throws {
        let course = try load("conditional")
        let conditional = try #require(course.blocks.first { $0.type == "conditional" })
        #expect(conditional.urlName == "condone" && conditional.children.count == 1)
        #expect(!course.blocks.contains { $0.type == "show" })
        // The run comes from slug, the org from org.
        #expect(course.id == "course-v1:edX+cond_test+2012_Fall")
        // Two files the course points to were not copied: each is an error naming it.
        #expect(course.issues.map(\.message) == [
            #"<html url_name="secret_page"/> points to html/secret_page.xml, which is missing"#,
            #"<problem url_name="choiceprob"/> points to problem/choiceprob.xml, which is missing"#,
        ])
    }

    /// Difference from the LMS: the LMS cannot load this course's block (course/2014_Fall.xml is
    /// not in the export), so its import fails; coursepack reports the missing file as an error
    /// and publishes an empty course (exit 1), keeping any previous publish.
    @Test func dotUnderscoreHasNoCourseFileAndSkipsAppleDoubleFiles() throws {
        let course = try load("dot-underscore")
        #expect(course.id == "course-v1:edX+dot-underscore+2014_Fall")
        #expect(course.issues.map(\.file) == ["course/2014_Fall.xml"])
        #expect(course.staticFiles.paths == [".example.txt", "example.txt"])
    }

    @Test func unicodeCourseKeysAreRead() throws {
        let course = try load("2014_Uni")
        #expect(course.id == "course-v1:Юникода+échantillon+2014_Uni")
        #expect(course.displayName == "Φυσικά το όνομα Unicode")
        #expect(course.blocks.count == 1 && course.issues == [])
    }
}
