import CourseExport
import Foundation
import Testing
import TestSupport

/// A minimal course with what each test adds to it.
func makeCourse(_ files: [String: String]) throws -> String {
    let root = TestSupport.temporaryFolder("course")
    var all = [
        "course.xml": #"<course url_name="run1" org="Org" course="Num"/>"#,
        "course/run1.xml": #"<course display_name="Test course"><chapter url_name="ch1"/></course>"#,
        "chapter/ch1.xml": #"<chapter display_name="Chapter 1"><sequential url_name="seq1"/></chapter>"#,
        "sequential/seq1.xml": #"<sequential display_name="Seq"><vertical url_name="v1"/></sequential>"#,
        "vertical/v1.xml": #"<vertical display_name="Unit"><html url_name="h1"/></vertical>"#,
        "html/h1.xml": #"<html filename="h1" display_name="From file"/>"#,
        "html/h1.html": "<p>hello</p>",
    ]
    for (path, text) in files { all[path] = text }
    try TestSupport.write(all, under: root)
    return root
}

@Suite struct CourseLoaderTests {
    @Test func readsTheExampleCourseInCourseOrder() throws {
        let directory = try ExportDirectory(root: TestSupport.exampleCourse)
        let course = try CourseLoader.load(directory)
        #expect(course.id == "course-v1:CoursepackX+CP101+2026")
        #expect(course.displayName == "Coursepack 101: Offline Bundles")
        let leaves = course.blocks.filter { !$0.isContainer }
        #expect(leaves.map(\.type) == ["html", "html", "html", "html", "html", "video", "html", "problem", "discussion"])
        #expect(leaves.map(\.urlName).prefix(2) == ["welcome_page", "styled_page"])
        #expect(course.issues == [])
        // The pointer's display_name overrides the one in html/styled_page.xml.
        #expect(leaves[1].displayName == "A styled page (pointer overrides the file's name)")
        // policy.json overrides the definition.
        #expect(leaves[6].displayName == "Course handout (name from policy.json)")
        #expect(!course.blocks.contains { $0.urlName == "draft_only" }, "drafts/ is never published")
        #expect(!course.blocks.contains { $0.type == "wiki" })
        // Parents nearest first.
        #expect(leaves[0].parents == [
            "block-v1:CoursepackX+CP101+2026+type@vertical+block@intro_unit",
            "block-v1:CoursepackX+CP101+2026+type@sequential+block@getting_started",
            "block-v1:CoursepackX+CP101+2026+type@chapter+block@welcome",
            "block-v1:CoursepackX+CP101+2026+type@course+block@2026",
        ])
        #expect(course.staticFiles.resolve("Course_Handout.pdf") == "Course Handout.pdf")
        #expect(course.staticFiles.resolve("images/logo.png") == "images/logo.png")
    }

    @Test func inlineBlocksGetStableGeneratedIDs() throws {
        let first = try CourseLoader.load(try ExportDirectory(root: TestSupport.exampleCourse))
        let second = try CourseLoader.load(try ExportDirectory(root: TestSupport.exampleCourse))
        let inline = try #require(first.blocks.first { $0.displayName == "An inline block" })
        // As the LMS names it: a block without url_name takes its cleaned display_name.
        #expect(inline.urlName == "An_inline_block")
        #expect(second.blocks.map(\.usageID) == first.blocks.map(\.usageID))
        #expect(inline.parents.first == "block-v1:CoursepackX+CP101+2026+type@vertical+block@intro_unit")
    }

    @Test func colonsInURLNamesMapToFolders() throws {
        let root = try makeCourse([
            "vertical/v1.xml": #"<vertical><html url_name="sub:page"/></vertical>"#,
            "html/sub/page.xml": #"<html display_name="Nested"><p>inline</p></html>"#,
        ])
        let course = try CourseLoader.load(try ExportDirectory(root: root))
        #expect(course.blocks.last?.displayName == "Nested")
        #expect(course.issues == [])
    }

    @Test func aMalformedBlockFileIsReportedWithFileAndLineAndTheRestLoads() throws {
        let root = try makeCourse([
            "vertical/v1.xml": #"<vertical><html url_name="h1"/><html url_name="broken"/></vertical>"#,
            "html/broken.xml": "<html display_name=\"x\">\n<p>\n</html>",
        ])
        let course = try CourseLoader.load(try ExportDirectory(root: root))
        #expect(course.blocks.contains { $0.urlName == "h1" })
        let issue = try #require(course.issues.first)
        #expect(issue.file == "html/broken.xml")
        #expect(issue.message.contains("line 3"), "\(issue.message)")
        #expect(issue.usageID == "block-v1:Org+Num+run1+type@html+block@broken")
    }

    @Test func missingPointerTargetsDuplicatesAndUnsafeNamesAreIssues() throws {
        let root = try makeCourse([
            "vertical/v1.xml": #"<vertical><html url_name="h1"/><html url_name="gone"/><html url_name="h1"/><html url_name="..:..:etc"/></vertical>"#,
        ])
        let course = try CourseLoader.load(try ExportDirectory(root: root))
        // A second use of an html's name is one block in the LMS: left out, with a warning.
        #expect(course.blocks.filter { $0.type == "html" }.count == 1)
        let messages = course.issues.map(\.message)
        #expect(messages.count == 2)
        #expect(messages[0].contains("html/gone.xml, which is missing"))
        #expect(messages[1].contains(".. path component"))
        #expect(course.warnings.map(\.message).first?.contains("url_name \"h1\" of <html> is used again") == true)
    }

    @Test func aMissingCourseXMLIsNotACourse() throws {
        let root = TestSupport.temporaryFolder("empty")
        #expect(throws: CourseError.notACourse(path: root, reason: "no course.xml in it or in a folder directly inside it")) {
            _ = try CourseLoader.open(root)
        }
    }

    @Test func theParentOfTheExportFolderWorksToo() throws {
        let root = try makeCourse([:])
        let parent = TestSupport.temporaryFolder("parent")
        try FileManager.default.moveItem(atPath: root, toPath: parent + "/course")
        let (course, export) = try CourseLoader.open(parent)
        export.close()
        #expect(course.id == "course-v1:Org+Num+run1")
    }

    @Test func symlinksOutOfTheExportAreRefused() throws {
        let root = try makeCourse([:])
        let outside = TestSupport.temporaryFolder("outside")
        try TestSupport.write(["secret.html": "secret"], under: outside)
        try FileManager.default.removeItem(atPath: root + "/html/h1.html")
        try FileManager.default.createSymbolicLink(atPath: root + "/html/h1.html", withDestinationPath: outside + "/secret.html")
        let directory = try ExportDirectory(root: root)
        #expect(throws: CourseError.self) { _ = try directory.read("html/h1.html") }
    }
}

@Suite struct ContainerTests {
    @Test func splitTestsKeepEveryGroupAndLibraryContentItsChildren() throws {
        let root = try makeCourse([
            "vertical/v1.xml": #"<vertical><split_test url_name="ab" user_partition_id="1"><vertical url_name="ga"/><vertical url_name="gb"/></split_test><library_content url_name="lib"><problem url_name="p1"/><problem url_name="p2"/></library_content><conditional url_name="cond"><html url_name="h1"/></conditional></vertical>"#,
            "vertical/ga.xml": #"<vertical><html url_name="in_a"/></vertical>"#,
            "vertical/gb.xml": #"<vertical><html url_name="in_b"/></vertical>"#,
            "html/in_a.xml": #"<html><p>A</p></html>"#,
            "html/in_b.xml": #"<html><p>B</p></html>"#,
            "problem/p1.xml": "<problem><p>one</p></problem>",
            "problem/p2.xml": "<problem><p>two</p></problem>",
        ])
        let course = try CourseLoader.load(try ExportDirectory(root: root))
        let leaves = course.blocks.filter { !$0.isContainer }.map(\.urlName)
        // Every group is content now (it was the first group only); without group_id_to_child
        // no group is named, which is reported.
        #expect(leaves == ["in_a", "in_b", "p1", "p2", "h1"])
        #expect(course.issues == [])
        #expect(course.warnings.first?.message.contains("no readable group_id_to_child") == true)
    }
}

@Suite struct XMLTreeTests {
    @Test func decodesEntitiesAndKeepsContentRanges() throws {
        let source = Array(#"<a x="1 &lt; 2 &amp; &#x41;"><b>t&amp;t</b><![CDATA[<raw>]]></a>"#.utf8)
        let root = try XMLTree.parse(source)
        #expect(root.attribute("x") == "1 < 2 & A")
        #expect(root.text == "t&t<raw>")
        #expect(String(decoding: source[root.contentRange], as: UTF8.self) == "<b>t&amp;t</b><![CDATA[<raw>]]>")
    }

    @Test(arguments: [
        ("<a><b></a>", 1, "</a> does not close <b>"),
        ("<a>\n\n<b x=1/></a>", 3, "not quoted"),
        ("<a></a><b/>", 1, "a second root element"),
        ("<a>", 1, "never closed"),
        ("", 1, "no root element"),
    ])
    func reportsLineAndReason(source: String, line: Int, reason: String) {
        do {
            _ = try XMLTree.parse(Array(source.utf8))
            Issue.record("\(source) parsed")
        } catch {
            #expect(error.line == line)
            #expect(error.reason.contains(reason), "\(error.reason)")
        }
    }

    @Test func deepNestingIsRefusedWithoutExhaustingTheStack() {
        let deep = String(repeating: "<a>", count: 10_000) + String(repeating: "</a>", count: 10_000)
        #expect(throws: XMLSyntaxError.self) { _ = try XMLTree.parse(Array(deep.utf8)) }
    }
}
