import CourseExport
import Foundation
import Testing
import TestSupport

/// The LMS import's way of reading OLX (edx-platform `xmodule/modulestore/xml.py`,
/// `xml_block.py`, `html_block.py`), rule by rule, on small snippets.
@Suite struct LegacyOLXTests {
    func load(_ files: [String: String]) throws -> Course {
        try CourseLoader.load(try ExportDirectory(root: try makeCourse(files)))
    }

    func block(_ course: Course, _ type: String, _ urlName: String) throws -> Block {
        try #require(course.blocks.first { $0.type == type && $0.urlName == urlName }, "no \(type) \(urlName) in \(course.blocks.map(\.urlName))")
    }

    func html(_ course: Course, _ urlName: String) throws -> String {
        let block = try block(course, "html", urlName)
        if let file = block.htmlFile { return String(decoding: try ExportDirectory(root: course.root).read(file), as: UTF8.self) }
        return String(decoding: block.definitionSource[block.definition.contentRange], as: UTF8.self)
    }

    // MARK: split_test

    @Test func everyGroupOfASplitTestIsPublishedWithItsPartitionAndGroup() throws {
        let course = try load([
            "vertical/v1.xml": #"""
                <vertical><split_test url_name="ab" user_partition_id="7" group_id_to_child='{"0": "i4x://Org/Num/vertical/ga", "1": "block-v1:Org+Num+run1+type@vertical+block@gb"}'>
                <vertical url_name="ga"><html url_name="in_a"><p>A</p></html></vertical>
                <vertical url_name="gb"><html url_name="in_b"><p>B</p></html></vertical>
                </split_test></vertical>
                """#,
        ])
        #expect(course.issues == [] && course.warnings == [])
        let a = try block(course, "html", "in_a"), b = try block(course, "html", "in_b")
        let split = "block-v1:Org+Num+run1+type@split_test+block@ab"
        #expect(a.splitTestGroup == SplitTestGroup(splitTest: split, userPartitionID: 7, groupID: 0))
        #expect(b.splitTestGroup == SplitTestGroup(splitTest: split, userPartitionID: 7, groupID: 1))
        #expect(a.groupAccess == [7: [0]] && b.groupAccess == [7: [1]])
        #expect(try html(course, "in_a") == "<p>A</p>" && html(course, "in_b") == "<p>B</p>")
    }

    @Test func aSplitTestChildInNoGroupIsPublishedForNoGroupWithAWarning() throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><split_test url_name="ab" user_partition_id="3" group_id_to_child='{"5": "i4x://Org/Num/html/shown"}'><html url_name="shown"/><html url_name="orphan"/></split_test></vertical>"#,
            "html/shown.xml": "<html><p>shown</p></html>",
            "html/orphan.xml": "<html><p>orphan</p></html>",
        ])
        #expect(try block(course, "html", "shown").groupAccess == [3: [5]])
        let orphan = try block(course, "html", "orphan")
        #expect(orphan.groupAccess == [3: []] && orphan.splitTestGroup?.groupID == nil)
        #expect(course.warnings.count == 1 && course.warnings.first?.message.contains("in no group") == true)
    }

    @Test func groupAccessIsMergedDownTheTreeAsTheLMSDoes() throws {
        let course = try load([
            "sequential/seq1.xml": #"<sequential><vertical url_name="v1" group_access='{"50": [1, 2], "60": [9]}'/></sequential>"#,
            "vertical/v1.xml": #"<vertical><html url_name="h1"/><html url_name="narrow" group_access='{"50": [2, 3], "70": []}'><p>x</p></html><html url_name="none" group_access='{"50": [3]}'><p>y</p></html><html url_name="bad" group_access="cohort A"><p>z</p></html></vertical>"#,
        ])
        #expect(try block(course, "html", "h1").groupAccess == [50: [1, 2], 60: [9]], "inherited from the unit")
        #expect(try block(course, "html", "narrow").groupAccess == [50: [2], 60: [9]], "intersected; an empty list restricts nothing")
        #expect(try block(course, "html", "none").groupAccess == [50: [], 60: [9]], "no group left: nobody sees it")
        #expect(try block(course, "html", "bad").groupAccess == [50: [1, 2], 60: [9]])
        #expect(course.warnings.map(\.message).contains { $0.contains("group_access \"cohort A\" is not a JSON object") })
    }

    // MARK: html content

    @Test func anHTMLFileWhoseRootIsNotHTMLHasItsChildrenAsContent() throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><html url_name="list"/></vertical>"#,
            "html/list.xml": #"<ol display_name="A list"><li>one</li><li>two</li></ol>"#,
        ])
        #expect(course.issues == [])
        #expect(try html(course, "list") == "<li>one</li><li>two</li>")
        #expect(try block(course, "html", "list").displayName == "A list")
    }

    @Test(arguments: [
        // filename without extension, beside the pointer file
        (#"<html filename="page"/>"#, "html/page.html"),
        // filename with its extension (html_block's ".html.html" fallback)
        (#"<html filename="page.html"/>"#, "html/page.html"),
        // a subfolder of html/
        (#"<html filename="sub/page"/>"#, "html/sub/page.html"),
        // a path that already starts with html/ (leading folders dropped until one exists)
        (#"<html filename="html/sub/page"/>"#, "html/sub/page.html"),
    ])
    func filenameFindsTheHTMLFileInAllItsHistoricalForms(definition: String, expected: String) throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><html url_name="p"/></vertical>"#,
            "html/p.xml": definition,
            "html/page.html": "<p>top</p>",
            "html/sub/page.html": "<p>sub</p>",
        ])
        #expect(try block(course, "html", "p").htmlFile == expected, "\(definition)")
    }

    @Test func filenameIsRelativeToTheFolderOfAColonNamedPointer() throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><html url_name="secret:lab"/><html display_name="Inline pointer" filename="toylab"/></vertical>"#,
            "html/secret/lab.xml": #"<html filename="lab"/>"#,
            "html/secret/lab.html": "<p>in secret/</p>",
            "html/toylab.html": "<p>toy lab</p>",
        ])
        #expect(try block(course, "html", "secret:lab").htmlFile == "html/secret/lab.html")
        // An inline <html filename> (old single-file courses) is named from its display_name.
        #expect(try block(course, "html", "Inline_pointer").htmlFile == "html/toylab.html")
    }

    @Test func aFilenameLeavingTheExportIsAnIssueNamingIt() throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><html url_name="h1"/><html url_name="evil"/></vertical>"#,
            "html/evil.xml": #"<html filename="../../etc/passwd"/>"#,
        ])
        #expect(course.issues.map(\.message) == [#"filename="../../etc/passwd" is not a plain file name inside html/"#])
        #expect(course.issues.first?.file == "html/evil.xml")
        #expect(course.blocks.contains { $0.urlName == "h1" })
    }

    // MARK: names and definitions

    @Test func legacyNamesFollowTheLMSOrder() throws {
        let course = try load([
            "vertical/v1.xml": #"""
                <vertical>
                <problem slug="by_slug" display_name="ignored"><p>1</p></problem>
                <problem name="By name: part 1?" display_name="ignored"><p>2</p></problem>
                <problem display_name="Only a display name"><p>3</p></problem>
                <problem><p>4</p></problem>
                </vertical>
                """#,
        ])
        let names = course.blocks.filter { $0.type == "problem" }.map(\.urlName)
        #expect(names.prefix(3) == ["by_slug", "By_name_part_1_", "Only_a_display_name"])
        // The LMS's id: the tag and SHA-1 of `<problem><p>4</p></problem>` (lxml's serialisation).
        #expect(names.last == "problem_5d29ac421f6e", "a block with no name of any kind is named from its content")
    }

    @Test func filenameOnOtherBlocksNamesTheirDefinitionFile() throws {
        let course = try load([
            "sequential/seq1.xml": #"<sequential><vertical filename="unit" slug="unit"/><problem filename="gone" url_name="gone_problem" display_name="x"/></sequential>"#,
            // Old exports hold any root element in a definition file; the LMS takes the type from the pointer.
            "vertical/unit.xml": #"<sequential display_name="Unit from file"><html url_name="h1"/></sequential>"#,
        ])
        let unit = try block(course, "vertical", "unit")
        #expect(unit.displayName == "Unit from file" && unit.file == "vertical/unit.xml")
        #expect(unit.children == ["block-v1:Org+Num+run1+type@html+block@h1"])
        #expect(course.issues.map(\.message) == [#"<problem filename="gone"/> points to problem/gone.xml, which is missing"#])
    }

    @Test func problemFilenamesAreAlsoFoundInTheOldProblemsFolder() throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><problem filename="old_style" display_name="Old"/><problem filename="top" display_name="Top"/></vertical>"#,
            "problems/old_style.xml": "<problem><p>from problems/</p></problem>",
            "top.xml": "<problem><p>from the top</p></problem>",
        ])
        #expect(course.issues == [])
        #expect(course.blocks.filter { $0.type == "problem" }.map(\.file) == ["problems/old_style.xml", "top.xml"])
    }

    @Test func aFilenameDefinitionThatIncludesItselfIsACycle() throws {
        let course = try load(["vertical/v1.xml": #"<vertical><vertical filename="loop"/></vertical>"#, "vertical/loop.xml": #"<vertical><vertical filename="loop"/></vertical>"#])
        // Unnamed, the inner copy gets the LMS's name of the outer one (same serialisation):
        // a reused name, left out, which ends the loop.
        #expect(course.blocks.filter { $0.type == "vertical" }.count == 2)
        #expect(course.warnings.map(\.id.code) == ["CP120"])
        let named = try load(["vertical/v1.xml": #"<vertical><vertical filename="loop" url_name="l"/></vertical>"#, "vertical/loop.xml": #"<vertical><vertical filename="loop" url_name="l"/></vertical>"#])
        #expect(named.issues.map(\.message) == ["definition cycle: vertical/loop.xml includes itself"])
    }

    @Test func aPointerFileWithAnotherRootElementIsRead() throws {
        let course = try load([
            "chapter/ch1.xml": #"<sequential display_name="Chapter kept in a sequential root"><sequential url_name="seq1"/></sequential>"#,
        ])
        #expect(course.issues == [])
        #expect(try block(course, "chapter", "ch1").displayName == "Chapter kept in a sequential root")
        #expect(course.blocks.contains { $0.urlName == "h1" })
    }

    /// Difference from the LMS: the LMS reads an element as a pointer only when `url_name` is
    /// its one attribute, so `<html url_name="x" display_name="y"/>` is an empty inline block
    /// there; coursepack reads `html/x.xml` when it exists, with the element's attributes over
    /// the file's (hand-written courses rely on it).
    @Test func aPointerWithMoreAttributesReadsItsFileWithOverrides() throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><html url_name="h1" display_name="From the pointer"/></vertical>"#,
        ])
        let h1 = try block(course, "html", "h1")
        #expect(h1.displayName == "From the pointer" && h1.htmlFile == "html/h1.html")
    }

    @Test func settingsElementsAreNotBlocks() throws {
        let course = try load([
            "course/run1.xml": #"<course><textbook title="Book" book_url="https://example.com/"/><wiki slug="w"/><chapter url_name="ch1"/></course>"#,
            "vertical/v1.xml": #"<vertical><conditional url_name="c" sources="i4x://Org/Num/problem/p"><html url_name="h1"/><show sources="i4x://Org/Num/html/h1"/></conditional></vertical>"#,
        ])
        #expect(!course.blocks.contains { ["textbook", "show", "wiki"].contains($0.type) })
        #expect(try block(course, "conditional", "c").children == ["block-v1:Org+Num+run1+type@html+block@h1"])
    }

    // MARK: course.xml

    @Test func anInlineCourseXMLIsTheCourse() throws {
        let root = TestSupport.temporaryFolder("inline")
        try TestSupport.write([
            "course.xml": #"<course display_name="Inline" course="Num" slug="2012_Fall"><chapter display_name="Overview"><html display_name="Intro">Hello</html></chapter></course>"#,
        ], under: root)
        let course = try CourseLoader.load(try ExportDirectory(root: root))
        #expect(course.id == "course-v1:edx+Num+2012_Fall", "no org: the LMS uses edx")
        #expect(course.warnings.map(\.message) == [#"the <course> element has no org attribute; using "edx" as the LMS does"#])
        #expect(course.blocks.map(\.urlName) == ["2012_Fall", "Overview", "Intro"])
        #expect(course.displayName == "Inline" && course.issues == [])
    }

    @Test func aCourseWithoutANumberIsNumberedAfterItsFolderOrTarball() throws {
        let parent = TestSupport.temporaryFolder("numberless")
        try TestSupport.write(["legacy course/course.xml": #"<course url_name="r" org="O"><chapter display_name="C"/></course>"#], under: parent)
        let folder = try CourseLoader.load(try ExportDirectory(root: parent + "/legacy course"))
        #expect(folder.id == "course-v1:O+legacy_course+r")
        #expect(folder.warnings.map(\.message) == [#"the <course> element has no course attribute; using "legacy_course" as the LMS does"#])
        let tar = try #require(TestSupport.which("tar"))
        #expect(try TestSupport.run(tar, ["czf", parent + "/export_2012.tar.gz", "-C", parent + "/legacy course", "."]).status == 0)
        // Unpacked into a fresh temporary folder each time, and still the same id.
        for _ in 0..<2 {
            let (course, export) = try CourseLoader.open(parent + "/export_2012.tar.gz")
            export.close()
            #expect(course.id == "course-v1:O+export_2012+r")
        }
    }

    @Test func aMissingCourseRunFileIsAnIssueAndTheCourseIsEmpty() throws {
        let root = TestSupport.temporaryFolder("norun")
        try TestSupport.write(["course.xml": #"<course org="O" course="N" slug="2014_Fall"/>"#], under: root)
        let course = try CourseLoader.load(try ExportDirectory(root: root))
        #expect(course.id == "course-v1:O+N+2014_Fall")
        #expect(course.blocks.count == 1)
        #expect(course.issues.map(\.file) == ["course/2014_Fall.xml"])
    }

    // MARK: duplicates

    /// As the LMS import does: an html pointer used by two parents is one block (one usage
    /// id); the later use is reported and left out, since one id names one archive.
    @Test func aPointerUsedByTwoParentsIsOneBlock() throws {
        let files = [
            "sequential/seq1.xml": #"<sequential><vertical url_name="v1"/><vertical url_name="v2"/></sequential>"#,
            "vertical/v2.xml": #"<vertical display_name="Second unit"><html url_name="h1"/></vertical>"#,
        ]
        let course = try load(files)
        let copies = course.blocks.filter { $0.type == "html" && $0.urlName.contains("h1") }
        try #require(copies.count == 1)
        #expect(copies[0].urlName == "h1" && copies[0].parents.first == "block-v1:Org+Num+run1+type@vertical+block@v1")
        try #require(course.warnings.count == 1)
        #expect(course.warnings[0].id.code == "CP120" && course.warnings[0].message.contains("left out"))
        #expect(course.issues == [])
    }

    /// A reused problem name is renamed as the LMS renames it: tag, old name, and the SHA-1 of
    /// the later element as serialised; any other type keeps the name once.
    @Test func reusedNamesAreRenamedOrKeptAsTheLMSDoes() throws {
        let course = try load([
            "vertical/v1.xml": #"<vertical><html url_name="same"><p>first</p></html><html url_name="same"><p>second</p></html><problem url_name="same"><p>1</p></problem><problem url_name="same"><p>2</p></problem></vertical>"#,
        ])
        #expect(course.blocks.filter { $0.type == "html" }.map(\.urlName) == ["same"])
        #expect(try html(course, "same") == "<p>first</p>")
        #expect(course.blocks.filter { $0.type == "problem" }.map(\.urlName) == ["same", "problem_same_0a2462c75ef6"])
        #expect(course.warnings.count == 2)
    }

    /// As the LMS import: a policy file that is not valid JSON is ignored with a warning (the
    /// old `policies/RUN.json` is read when `policy.json` gives nothing), not a refusal.
    @Test func aPolicyThatIsNotJSONIsIgnoredWithAWarning() throws {
        let broken = try load(["policies/run1/policy.json": "{ \"html/h1\": ", "policies/run1.json": "[1, 2]"])
        #expect(broken.blocks.count == 5 && broken.issues == [])
        #expect(broken.warnings.map(\.file) == ["policies/run1/policy.json", "policies/run1.json"])
        #expect(broken.warnings.allSatisfy { $0.id.code == "CP123" })
        let fallback = try load(["policies/run1/policy.json": "not json", "policies/run1.json": #"{"html/h1": {"display_name": "From the old policy"}}"#])
        #expect(try block(fallback, "html", "h1").displayName == "From the old policy")
        let assets = try load(["policies/assets.json": "{"])
        #expect(assets.warnings.map(\.file) == ["policies/assets.json"])
    }

    @Test func appleDoubleFilesAreNotStaticFiles() throws {
        let course = try load(["static/._notes.txt": "resource fork", "static/notes.txt": "notes"])
        #expect(course.staticFiles.paths == ["notes.txt"])
    }
}

@Suite struct LeafPlacementTests {
    @Test func leavesAnywhereInTheTreeArePublished() throws {
        let course = try CourseLoader.load(try ExportDirectory(root: try makeCourse([
            "chapter/ch1.xml": #"<chapter><problem url_name="in_chapter"><p>Q</p></problem><sequential url_name="seq1"/></chapter>"#,
            "sequential/seq1.xml": #"<sequential><html url_name="in_sequential"><p>S</p></html><vertical url_name="v1"/><videosequence url_name="vs"><html url_name="in_videosequence"/></videosequence></sequential>"#,
            "vertical/v1.xml": #"<vertical><vertical url_name="inner"><html url_name="in_nested_vertical"><p>N</p></html></vertical><library_content url_name="lib"><problem url_name="from_library"><p>L</p></problem></library_content></vertical>"#,
            "html/in_videosequence.xml": "<html><p>V</p></html>",
        ])))
        #expect(course.issues == [])
        let leaves = course.blocks.filter { !$0.isContainer }
        #expect(leaves.map(\.urlName) == ["in_chapter", "in_sequential", "in_nested_vertical", "from_library", "in_videosequence"])
        let nested = try #require(leaves.first { $0.urlName == "in_nested_vertical" })
        #expect(nested.parents.prefix(2) == ["block-v1:Org+Num+run1+type@vertical+block@inner", "block-v1:Org+Num+run1+type@vertical+block@v1"])
    }
}
