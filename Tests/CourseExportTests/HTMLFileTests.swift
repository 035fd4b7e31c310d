@testable import CourseExport
import Testing

/// Where an html block's file is looked for, from its url_name and `filename`.
@Suite struct HTMLFileTests {
    @Test func aPlainURLNameLooksInHTMLAndColonsAreFolders() throws {
        #expect(TreeWalker.htmlFolder(ofURLName: "intro") == "html")
        #expect(TreeWalker.htmlFolder(ofURLName: "0a1b_c-d.e") == "html")
        #expect(TreeWalker.htmlFolder(ofURLName: "a:b:c") == "html/a/b")
        #expect(TreeWalker.htmlFolder(ofURLName: "a:b") == "html/a")
        #expect(TreeWalker.htmlFolder(ofURLName: "a/b") == "html/a")
        #expect(TreeWalker.htmlFolder(ofURLName: "") == "")
        #expect(TreeWalker.htmlFolder(ofURLName: "é") == "html")
        #expect(TreeWalker.path(ofURLName: "intro") == "intro")
        #expect(TreeWalker.path(ofURLName: "a:b::c") == "a/b//c")

        let present: Set<String> = ["html/a/b/page.html", "html/page.html", "html/only.html"]
        #expect(try TreeWalker.htmlFile(filename: "page", urlName: "a:b:c", exists: present.contains).get() == "html/a/b/page.html")
        #expect(try TreeWalker.htmlFile(filename: "page", urlName: "intro", exists: present.contains).get() == "html/page.html")
        #expect(try TreeWalker.htmlFile(filename: "only", urlName: "x:y", exists: present.contains).get() == "html/x/only.html")
        #expect(try TreeWalker.htmlFile(filename: "gone", urlName: "intro", exists: present.contains).get() == "html/gone.html")
    }
}
