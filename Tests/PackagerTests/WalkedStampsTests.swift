import CourseExport
import FileSystem
import Foundation
import IncrementalBuild
import Testing
import TestSupport

/// The stamps that the walk checking a course takes (`IncrementalBuild.stampInputs` with
/// `collectsPlainFiles`) answer the export's `plainFileStamp`, so a rebuild stamps each file
/// once: for the export inside the folder walked, only for plain files the walk saw, and as of
/// the walk (taken before anything is read). What the walk did not see is asked of the disk,
/// with the same checks as ever.
@Suite struct WalkedStampsTests {
    private func walk(_ path: String) throws -> PlainFileStamps {
        let incremental = IncrementalBuild(outputFolder: path + "-out", stateFolder: path + "-state")
        return try #require(incremental.stampInputs(coursePath: path, settings: [], collectsPlainFiles: true)).plainFiles
    }

    @Test func anExportInsideTheWalkedFolderTakesItsStampsAndAsksTheDiskOfTheRest() throws {
        // Studio's layout: the export in `course/` inside the folder given to the build.
        let parent = TestSupport.temporaryFolder("walked-stamps")
        let outside = TestSupport.temporaryFolder("walked-stamps-outside")
        try TestSupport.write(
            ["course/course.xml": "<course/>", "course/html/a.xml": "<html/>", "course/html/a.html": "<p>a</p>"], under: parent)
        try TestSupport.write(["elsewhere/b.xml": "<html/>"], under: outside)
        try TestSupport.write(["beside/c.xml": "<html/>"], under: parent)
        let stamps = try walk(parent)
        let stampOfA = try #require(FileStamp.of(parent + "/course/html/a.xml"))
        #expect(stamps.under(stamps.root + "/course")?.stamp(of: "html/a.xml") == stampOfA, "the root is canonical: \(stamps.root)")
        #expect(!stamps.root.contains("//"))

        // Made after the walk: what the disk says, by the usual checks.
        try TestSupport.write(["course/html/later.xml": "<html/>"], under: parent)
        #expect(symlink(outside + "/elsewhere", parent + "/course/linked") == 0)
        #expect(link(parent + "/course/html/a.html", parent + "/course/html/second.html") == 0)

        let export = try OpenedExport.open(parent).stamped(by: stamps)
        let directory = export.directory
        #expect(directory.root.hasSuffix("/course"))
        // Rewritten after the walk: the walk's stamp, which the next build's walk will not match.
        try TestSupport.write(["course/html/a.xml": "<html display_name=\"longer now\"/>"], under: parent)
        #expect(directory.plainFileStamp("html/a.xml") == stampOfA)
        #expect(try ExportDirectory(root: parent + "/course").plainFileStamp("html/a.xml") != stampOfA)

        #expect(directory.plainFileStamp("html/later.xml") == FileStamp.of(parent + "/course/html/later.xml"))
        #expect(directory.plainFileStamp("linked/b.xml") == nil, "a file through a link that leaves the export")
        // The walk saw one name; the read that follows judges the file as it is now.
        #expect(directory.plainFileStamp("html/a.html") != nil)
        #expect(throws: CourseError.self) { try directory.read("html/a.html") }
        #expect(directory.plainFileStamp("html/second.html") == nil, "a second name of a file")
        // Walked, but beside the export, not in it: no path out of the export takes its stamp.
        #expect(stamps.under(stamps.root)?.stamp(of: "beside/c.xml") != nil)
        #expect(directory.plainFileStamp("../beside/c.xml") == nil)
        #expect(directory.plainFileStamp("html/../../beside/c.xml") == nil)
        #expect(directory.plainFileStamp("%2E%2E/beside/c.xml") == nil)
        #expect(directory.plainFileStamp("course.xml") == nil, "a file at the top has no plain-file stamp, as before")
    }

    /// Stamps of another folder, or of a folder inside the export, say nothing about it.
    @Test func stampsOfAnotherFolderAreNotTaken() throws {
        let course = TestSupport.temporaryFolder("walked-other")
        let other = TestSupport.temporaryFolder("walked-other-b")
        try TestSupport.write(["course.xml": "<course/>", "html/a.xml": "<html/>"], under: course)
        try TestSupport.write(["course.xml": "<course/>", "html/a.xml": "<html/>", "html/b.xml": "<html/>"], under: other)
        let directory = try ExportDirectory(root: course).stamped(by: try walk(other))
        #expect(directory.plainFileStamp("html/a.xml") == FileStamp.of(course + "/html/a.xml"))
        #expect(directory.plainFileStamp("html/b.xml") == nil)
        // A folder whose path, past the walked root's length, reads like a folder inside it.
        let base = TestSupport.temporaryFolder("walked-lookalike")
        try TestSupport.write(["aa/cc/course.xml": "<course/>", "aa/cc/html/a.xml": "<html/>"], under: base)
        try TestSupport.write(["ab/cc/course.xml": "<course/>", "ab/cc/html/a.xml": "<html display_name=\"other\"/>"], under: base)
        let lookalike = try ExportDirectory(root: base + "/ab/cc").stamped(by: try walk(base + "/aa"))
        #expect(lookalike.plainFileStamp("html/a.xml") == FileStamp.of(base + "/ab/cc/html/a.xml"))
        let inner = try ExportDirectory(root: course).stamped(by: try walk(course + "/html"))
        #expect(inner.plainFileStamp("html/a.xml") == FileStamp.of(course + "/html/a.xml"))
    }
}
