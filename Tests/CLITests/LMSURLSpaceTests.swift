import Foundation
import Testing
import TestSupport

/// `coursepack serve`'s LMS-shaped URLs (see `LMSURLSpace`) over loopback, with the example
/// course synced: the course-id-in-the-path mirror, jump_to redirects, course files by their
/// LMS URLs, and the target's safety rules through all of them.
@Suite(.serialized) struct LMSURLSpaceTests {
    static let id = "course-v1:CoursepackX+CP101+2026"
    static let lms = "/courses/" + id

    @Test func lmsShapedPathsReachTheCoursesPagesAndFiles() throws {
        // A course file really named like a flattened asset key (`images/logo.png` →
        // `images_logo.png`), which a page of the example course links beside the real one.
        let source = TestSupport.temporaryFolder("lms-urls") + "/course"
        try FileManager.default.copyItem(atPath: TestSupport.exampleCourse, toPath: source)
        try Data("real name".utf8).write(to: URL(fileURLWithPath: source + "/static/images_logo.png"))
        let welcome = URL(fileURLWithPath: source + "/html/welcome_page.html")
        try (String(contentsOf: welcome, encoding: .utf8) + #"<p><img src="/static/images_logo.png" alt="the same name, flattened"></p>"#)
            .write(to: welcome, atomically: true, encoding: .utf8)
        let published = TestSupport.temporaryFolder("lms-urls") + "/published"
        #expect(try TestSupport.coursepack(["build", source, "--out", published, "-q"]).status == 0)
        let target = TestSupport.temporaryFolder("lms-urls") + "/device"
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)
        let course = target + "/CoursepackX+CP101+2026"
        #expect(symlink("/etc", course + "/html/styled_page/static/elsewhere") == 0)
        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let banner = "images/banner.png"
        let answers = try ServeTests.get(base, [
            ["name": "page", "path": Self.lms + "/html/welcome_page/index.html"],
            ["name": "outline", "path": Self.lms + "/"],
            ["name": "course", "path": Self.lms],
            ["name": "folder", "path": Self.lms + "/html/welcome_page"],
            ["name": "jump", "path": Self.lms + "/jump_to/block-v1:CoursepackX+CP101+2026+type@html+block@styled_page"],
            ["name": "jump-unit", "path": Self.lms + "/jump_to/block-v1:CoursepackX+CP101+2026+type@vertical+block@intro_unit"],
            ["name": "jump-id", "path": Self.lms + "/jump_to_id/styled_page"],
            ["name": "courseware", "path": Self.lms + "/courseware/welcome/getting_started/1"],
            ["name": "jump-online", "path": Self.lms + "/jump_to_id/only_on_the_lms"],
            ["name": "static", "path": "/static/" + banner],
            ["name": "static-head", "path": "/static/" + banner, "method": "HEAD"],
            ["name": "course-static", "path": Self.lms + "/static/" + banner],
            ["name": "asset", "path": "/asset-v1:CoursepackX+CP101+2026+type@asset+block@images_banner.png"],
            ["name": "c4x", "path": "/c4x/CoursepackX/CP101/asset/" + banner],
            ["name": "real-name", "path": "/asset-v1:CoursepackX+CP101+2026+type@asset+block@images_logo.png"],
            ["name": "other-asset", "path": "/asset-v1:Other+X+1+type@asset+block@images_banner.png"],
            ["name": "other-course", "path": "/courses/course-v1:Other+X+1/index.html"],
            ["name": "static-missing", "path": "/static/images/none.png"],
            ["name": "dotdot", "path": Self.lms + "/../../../etc/passwd"],
            ["name": "encoded", "path": Self.lms + "/%2e%2e/%2e%2e/etc/passwd"],
            ["name": "static-dotdot", "path": "/static/../../etc/passwd"],
            ["name": "hidden", "path": Self.lms + "/.coursepack-sync/published-manifest.json"],
            ["name": "link", "path": "/static/elsewhere/passwd"],
            ["name": "course-link", "path": Self.lms + "/html/styled_page/static/elsewhere/passwd"],
        ])
        let page = try #require(answers["page"])
        #expect(page.status == 200 && ServeTests.secret(in: page) != nil, "\(page.status)")
        #expect(answers["outline"]?.text.contains("href=\"html/welcome_page/index.html\"") == true)
        #expect(answers["course"]?.status == 302 && answers["course"]?.location == Self.lms + "/")
        #expect(answers["folder"]?.status == 302 && answers["folder"]?.location == Self.lms + "/html/welcome_page/")
        #expect(answers["jump"]?.status == 302 && answers["jump"]?.location == Self.lms + "/html/styled_page/index.html")
        #expect(answers["jump-unit"]?.location == Self.lms + "/html/welcome_page/index.html", "a unit opens at its first page")
        #expect(answers["jump-id"]?.location == Self.lms + "/html/styled_page/index.html")
        #expect(answers["courseware"]?.location == Self.lms + "/html/welcome_page/index.html")
        #expect(answers["jump-online"]?.status == 404 && answers["jump-online"]?.text.contains("online only") == true)
        let file = TestSupport.read(course + "/html/styled_page/static/" + banner)
        for name in ["static", "course-static", "asset", "c4x"] {
            let answer = try #require(answers[name])
            #expect(answer.status == 200 && answer.type == "image/png" && answer.body == file, "\(name): \(answer.status) \(answer.type)")
        }
        #expect(answers["real-name"]?.text == "real name", "a real file name wins over a flattened path")
        #expect(answers["static-head"]?.status == 200 && answers["static-head"]?.body.isEmpty == true)
        for name in ["other-asset", "other-course", "static-missing"] { #expect(answers[name]?.status == 404, "\(name)") }
        for name in ["dotdot", "encoded", "static-dotdot", "hidden", "link", "course-link"] {
            let answer = try #require(answers[name])
            #expect([403, 404].contains(answer.status), "\(name): \(answer.status)")
            #expect(!answer.text.contains("root:"), "\(name) leaked /etc/passwd")
        }
    }

    /// A second course synced while serve runs is found by its id; each course's asset key and
    /// each page's Referer pick that course's copy of a file both courses have.
    @Test func aCourseSyncedWhileServingIsFoundAndEachCourseKeepsItsFiles() throws {
        let target = try ServeTests.syncedExample()
        let (server, base, _) = try ServeTests.startServer(target)
        defer { #expect(server.stop(), "the server outlived its test") }
        let other = "course-v1:OtherX+CP101+2026"
        #expect(try ServeTests.get(base, [["name": "before", "path": "/courses/\(other)/"]])["before"]?.status == 404)

        let source = TestSupport.temporaryFolder("lms") + "/course"
        try FileManager.default.copyItem(atPath: TestSupport.exampleCourse, toPath: source)
        try Data("<course url_name=\"2026\" org=\"OtherX\" course=\"CP101\"/>".utf8).write(to: URL(fileURLWithPath: source + "/course.xml"))
        let banner = try FileHandle(forWritingTo: URL(fileURLWithPath: source + "/static/images/banner.png"))
        try banner.seekToEnd()
        try banner.write(contentsOf: Data("other course".utf8))
        try banner.close()
        let published = TestSupport.temporaryFolder("lms") + "/published"
        #expect(try TestSupport.coursepack(["build", source, "--out", published, "-q"]).status == 0)
        #expect(try TestSupport.coursepack(["sync", published, "--to", target]).status == 0)

        let file = "images/banner.png"
        let answers = try ServeTests.get(base, [
            ["name": "after", "path": "/courses/\(other)/"],
            ["name": "asset", "path": "/asset-v1:OtherX+CP101+2026+type@asset+block@images_banner.png"],
            ["name": "first-asset", "path": "/asset-v1:CoursepackX+CP101+2026+type@asset+block@images_banner.png"],
            ["name": "static-other", "path": "/static/" + file, "headers": ["Referer": base + "courses/\(other)/html/welcome_page/index.html"]],
            ["name": "static-first", "path": "/static/" + file, "headers": ["Referer": base + "CoursepackX+CP101+2026/html/welcome_page/index.html"]],
            ["name": "static-ambiguous", "path": "/static/" + file],
        ])
        #expect(answers["after"]?.status == 200)
        let otherFile = TestSupport.read(target + "/OtherX+CP101+2026/html/styled_page/static/" + file)
        let firstFile = TestSupport.read(target + "/CoursepackX+CP101+2026/html/styled_page/static/" + file)
        #expect(otherFile != firstFile)
        #expect(answers["asset"]?.body == otherFile && answers["static-other"]?.body == otherFile)
        #expect(answers["first-asset"]?.body == firstFile && answers["static-first"]?.body == firstFile)
        #expect(answers["static-ambiguous"]?.status == 404, "two courses have the file and the request names neither")
    }
}
