@testable import BlockRenderer
import Foundation
import Packager
import Testing
import TestSupport
import ZipArchive

@Suite struct TemplateTests {
    /// The binary carries Templates/ inside it; `make templates` refreshes the copy.
    @Test func embeddedTemplatesMatchTemplatesFolder() throws {
        let folder = TestSupport.packageRoot + "/Templates"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names == PageTemplates.defaultFiles.keys.sorted())
        for name in names {
            let text = String(decoding: TestSupport.read(folder + "/" + name), as: UTF8.self)
            #expect(PageTemplates.defaultFiles[name] == text.trimmingCharacters(in: .newlines), "\(name) is stale: run `make templates`")
        }
    }

    @Test func anOperatorShellReplacesTheDefaultAndTheRestStays() throws {
        let templates = TestSupport.temporaryFolder("templates")
        try TestSupport.write(["page.mustache": "<!DOCTYPE html><html lang=\"{{language}}\"><title>{{title}}</title><body class=\"brand\">{{{content}}}</body></html>"], under: templates)
        let out = TestSupport.temporaryFolder("out")
        let options = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 1, templates: try PageTemplates.overriding(with: templates))
        _ = try CoursePackager(options: options).build(coursePath: TestSupport.exampleCourse)
        let unzip = try #require(TestSupport.which("unzip"))
        let page = try TestSupport.run(unzip, ["-p", out + "/html/handout_page.zip", "index.html"]).stdout
        #expect(page.hasPrefix("<!DOCTYPE html><html lang=\"en\"><title>Course handout (name from policy.json)</title><body class=\"brand\">"))
        let css = try TestSupport.run(unzip, ["-p", out + "/html/handout_page.zip", "coursepack.css"]).stdout
        #expect(css == PageTemplates.defaultFiles["coursepack.css"], "the default stylesheet is used when not overridden")
    }

    @Test func aShellWithoutContentIsRefused() throws {
        let templates = TestSupport.temporaryFolder("templates")
        try TestSupport.write(["page.mustache": "<html>{{title}}</html>"], under: templates)
        #expect(throws: RenderError.self) { _ = try PageTemplates.overriding(with: templates) }
    }
}

@Suite struct TemplateContentTests {
    /// Twice would put the block in the page twice; the operator learns which file is wrong.
    @Test(arguments: [
        "<html>{{{content}}}<hr>{{{content}}}</html>",
        "<html>{{{content}}}{{& content}}</html>",
        "<html>{{{ content }}}</html>{{content}}",
    ])
    func aShellWithContentMoreThanOnceIsRefusedNamingTheFile(shell: String) throws {
        let templates = TestSupport.temporaryFolder("templates")
        try TestSupport.write(["page.mustache": shell], under: templates)
        #expect {
            _ = try PageTemplates.overriding(with: templates)
        } throws: { error in
            guard case .template(let path, _) = error as? RenderError else { return false }
            return path == templates + "/page.mustache"
        }
    }

    @Test func theDefaultShellDoesNotPrintTheGenerator() {
        let shell = PageTemplates.defaultFiles["page.mustache"] ?? ""
        #expect(!shell.contains("generator"))
        #expect(PageTemplates.contentTags(in: shell) == (1, 0))
    }

    /// The same course gives the same pages, whatever the shell: nothing random reaches a page.
    @Test func pagesAreTheSameOnEveryBuild() throws {
        let templates = TestSupport.temporaryFolder("templates")
        try TestSupport.write(["page.mustache": "<main>{{{ content }}}</main><footer>{{title}}</footer>"], under: templates)
        let set = try PageTemplates.overriding(with: templates)
        let first = TestSupport.temporaryFolder("out")
        let second = TestSupport.temporaryFolder("out")
        for out in [first, second] {
            _ = try CoursePackager(options: BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 1, templates: set)).build(coursePath: TestSupport.exampleCourse)
        }
        let diff = try TestSupport.run(try #require(TestSupport.which("diff")), ["-r", first, second])
        #expect(diff.status == 0, "\(diff.stdout.prefix(1000))")
    }
}
