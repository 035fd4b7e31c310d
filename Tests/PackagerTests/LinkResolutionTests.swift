import Foundation
import Packager
import Testing
import TestSupport

@Suite struct LinkResolutionTests {
    @Test func courseLinksBecomeBundleOrLMSLinks() throws {
        let page = """
            <a href="/courses/course-v1:O+N+r/progress">progress</a>
            <a href="/jump_to/block-v1:O+N+r+type@html+block@other">other</a>
            <a href="/jump_to_id/v#top">the unit</a>
            <a href="other">bare url_name</a>
            <img src="photo one.png">
            <a href="https://example.org/x?a=1&amp;b=2">external</a>
            """
        let course = try courseWith([("html", "page", #"<html filename="page"/>"#), ("html", "other", #"<html filename="other"/>"#)],
                                    extra: ["html/page.html": page, "html/other.html": "<p>other</p>", "static/photo one.png": "PNG"])
        let out = TestSupport.temporaryFolder("out")
        let options = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 1, lmsURL: "https://lms.example.org/")
        let report = try CoursePackager(options: options).build(coursePath: course)
        #expect(report.warnings == [])
        let html = try TestSupport.run(try #require(TestSupport.which("unzip")), ["-p", out + "/html/page.zip", "index.html"]).stdout
        #expect(html.contains(#"<a href="https://lms.example.org/courses/course-v1:O+N+r/progress">"#))
        #expect(html.contains(#"<a href="../../html/other/index.html">other</a>"#))
        #expect(html.contains(#"<a href="../../html/page/index.html#top">the unit</a>"#), "a unit's link opens its first block")
        #expect(html.contains(#"<a href="../../html/other/index.html">bare url_name</a>"#))
        #expect(html.contains(#"<img src="static/photo%20one.png">"#))
        #expect(html.contains(#"<a href="https://example.org/x?a=1&amp;b=2">"#))
    }

    @Test func withoutLMSURLCourseLinksAreKeptAndReported() throws {
        let course = try courseWith([("html", "page", #"<html filename="page"/>"#)],
                                    extra: ["html/page.html": #"<a href="/courses/course-v1:O+N+r/progress">progress</a>"#])
        let (_, report) = try build(course)
        #expect(report.warnings.map(\.reference) == ["/courses/course-v1:O+N+r/progress"])
        #expect(report.warnings.first?.file == "html/page.html")
    }

    @Test func stylesheetsBringTheirImportsAndImagesRewrittenWhereTheyLand() throws {
        let (out, report) = try build(TestSupport.exampleCourse)
        #expect(report.errors == [])
        let unzip = try #require(TestSupport.which("unzip"))
        let entries = try TestSupport.run(unzip, ["-Z1", out + "/html/styled_page.zip"]).stdout.split(separator: "\n")
        #expect(entries == ["coursepack.css", "index.html", "static/css/course.css", "static/css/theme.css", "static/images/banner.png"])
        let css = try TestSupport.run(unzip, ["-p", out + "/html/styled_page.zip", "static/css/course.css"]).stdout
        #expect(css.contains(#"@import url("theme.css");"#) && css.contains("url(../images/banner.png)"))
        let page = try TestSupport.run(unzip, ["-p", out + "/html/styled_page.zip", "index.html"]).stdout
        #expect(page.contains(#"href="static/css/course.css?v=3""#))
    }

    @Test func rightToLeftCoursesGetRightToLeftPages() throws {
        let course = try courseWith([("html", "page", #"<html filename="page"/>"#)], extra: ["html/page.html": "<p>مرحبا</p>"])
        try TestSupport.write(["course/r.xml": #"<course language="ar"><chapter url_name="c"/></course>"#], under: course)
        let (out, _) = try build(course)
        let page = try TestSupport.run(try #require(TestSupport.which("unzip")), ["-p", out + "/html/page.zip", "index.html"]).stdout
        #expect(page.contains(#"<html lang="ar" dir="rtl">"#))
    }
}
