import ClientTarget
import Manifest
import Testing

@Suite struct ByteSizeTests {
    @Test func sizesAsPeopleWriteThem() {
        #expect(ByteSize.parse("200MB") == 200_000_000)
        #expect(ByteSize.parse("1.5GB") == 1_500_000_000)
        #expect(ByteSize.parse("500MiB") == 524_288_000)
        #expect(ByteSize.parse("64 kB") == 64_000)
        #expect(ByteSize.parse("1048576") == 1_048_576)
        for bad in ["lots", "12 parsecs", "-5MB", "", "MB", "1.2.3GB", "99999999999TB"] {
            #expect(ByteSize.parse(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct CourseFolderNameTests {
    @Test func folderNamesStayInsideTheTargetAndVisible() {
        #expect(ClientTarget.folderName(forCourse: "course-v1:edX+DemoX+Demo_Course") == "edX+DemoX+Demo_Course")
        for hostile in ["course-v1:../../etc", "course-v1:.hidden", "../x/y", "course-v1:", "_navigation", "course-v1:a b/c\\d"] {
            let name = ClientTarget.folderName(forCourse: hostile)
            #expect(!name.isEmpty && !name.contains("/") && !name.contains("\\") && !name.hasPrefix(".") && name != "_navigation", "\(hostile) → \(name)")
        }
    }
}

@Suite struct OutlinePageTests {
    static let course = "block-v1:X+Y+Z+type@course+block@course"
    static let chapter = "block-v1:X+Y+Z+type@chapter+block@ch"
    static let unit = "block-v1:X+Y+Z+type@vertical+block@u"

    static func manifest() -> CourseManifest {
        let parents = [unit, "block-v1:X+Y+Z+type@sequential+block@s", chapter, course]
        var manifest = CourseManifest(courseID: "course-v1:X+Y+Z", publishedAt: "2026-11-23T00:00:00Z", generator: "test", blocks: [
            BlockEntry(usageID: "block-v1:X+Y+Z+type@html+block@b", type: "html", displayName: "Second <b>bold</b>", parents: parents,
                       archive: "html/b.zip", size: 10, sha256: String(repeating: "a", count: 64)),
            BlockEntry(usageID: "block-v1:X+Y+Z+type@html+block@a", type: "html", displayName: "<script>alert(1)</script>", parents: parents,
                       archive: "html/a.zip", size: 10, sha256: String(repeating: "b", count: 64)),
            BlockEntry(usageID: "block-v1:X+Y+Z+type@problem+block@p", type: "problem", displayName: "Quiz", parents: parents,
                       offline: false, reason: "needs the LMS"),
            BlockEntry(usageID: "block-v1:X+Y+Z+type@html+block@c", type: "html", displayName: "Third", parents: parents,
                       archive: "html/c.zip", size: 10, sha256: String(repeating: "c", count: 64)),
        ])
        manifest.outline = [
            OutlineEntry(usageID: course, type: "course", displayName: "A & B course", children: [chapter]),
            OutlineEntry(usageID: chapter, type: "chapter", displayName: "Chapter one", children: ["block-v1:X+Y+Z+type@sequential+block@s"]),
            OutlineEntry(usageID: "block-v1:X+Y+Z+type@sequential+block@s", type: "sequential", displayName: "Subsection", children: [unit]),
            // The unit's children in their own order, with one that failed to load.
            OutlineEntry(usageID: unit, type: "vertical", displayName: "Unit", children: [
                "block-v1:X+Y+Z+type@html+block@a", "block-v1:X+Y+Z+type@html+block@missing", "block-v1:X+Y+Z+type@html+block@b",
                "block-v1:X+Y+Z+type@problem+block@p", "block-v1:X+Y+Z+type@html+block@c",
            ]),
        ]
        return manifest
    }

    @Test func theOutlineNamesEveryBlockInOrderEscapedAndLinksOnlyInstalledOnes() throws {
        let installed: Set<String> = ["block-v1:X+Y+Z+type@html+block@a", "block-v1:X+Y+Z+type@html+block@c"]
        let (outline, frames) = OutlinePage.render(published: Self.manifest(), installed: installed)
        #expect(!outline.contains("<script>alert"))
        #expect(outline.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(outline.contains("<title>A &amp; B course</title>"))
        #expect(outline.contains("<a href=\"html/a/index.html\">"))
        #expect(outline.contains("<a href=\"html/c/index.html\">Third</a>"))
        #expect(!outline.contains("href=\"html/b/index.html\""))
        #expect(outline.contains("Second &lt;b&gt;bold&lt;/b&gt; (not on this device)"))
        #expect(outline.contains("Quiz (online only: needs the LMS)"))
        // Outline order (a, b, p, c), not the blocks list's order (b, a, p, c).
        let a = try #require(outline.range(of: "html/a/index.html"))
        let b = try #require(outline.range(of: "Second &lt;b&gt;"))
        let c = try #require(outline.range(of: "html/c/index.html"))
        #expect(a.lowerBound < b.lowerBound && b.lowerBound < c.lowerBound)
        // One frame per installed page, in the blocks' course order, linked to each other.
        #expect(frames.count == 2)
        #expect(frames[0].contains("src=\"../html/a/index.html\"") && frames[0].contains("href=\"2.html\"") && !frames[0].contains("rel=\"prev\""))
        #expect(frames[1].contains("src=\"../html/c/index.html\"") && frames[1].contains("href=\"1.html\"") && !frames[1].contains("rel=\"next\""))
    }

    /// Every character HTML gives a meaning is escaped, in a name with all of them or one alone;
    /// a folder name outside the plain characters is percent-encoded.
    @Test func namesAreEscapedAndFoldersEncoded() {
        var manifest = Self.manifest()
        manifest.outline?[0].displayName = #"Tom's "best" <course> & more"#
        manifest.blocks[3].displayName = "'"
        let (outline, frames) = OutlinePage.render(published: manifest, installed: ["block-v1:X+Y+Z+type@html+block@c"], searchIndex: "search/a b/index.js")
        #expect(outline.contains("<title>Tom&#39;s &quot;best&quot; &lt;course&gt; &amp; more</title>"))
        #expect(outline.contains("<a href=\"html/c/index.html\">&#39;</a>"))
        #expect(frames.first?.contains("<title>&#39;</title>") == true)
        #expect(outline.contains("search/a%20b/index.js"))
    }
}
