import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// What a learner gets offline beyond the block's own HTML: framed course pages with their
/// files, the LMS's jQuery and math, captions, unit styles, and honest links and network lists.
@Suite struct LearnerViewTests {
    func page(_ out: String, _ archive: String, _ entry: String = "index.html") throws -> String {
        try TestSupport.run(try #require(TestSupport.which("unzip")), ["-p", out + "/" + archive, entry]).stdout
    }

    func entries(_ out: String, _ archive: String) throws -> [String] {
        try TestSupport.run(try #require(TestSupport.which("unzip")), ["-Z1", out + "/" + archive]).stdout.split(separator: "\n").map(String.init)
    }

    @Test func aFramedCoursePageIsBundledWithWhatItReferencesAndCyclesStop() throws {
        let course = try courseWith([("html", "sim", #"<html filename="sim"/>"#)], extra: [
            "html/sim.html": #"<iframe src="/static/tools/sim.html" title="Simulation"></iframe>"#,
            "static/tools/sim.html": #"<link rel="stylesheet" href="sim.css"><script src="/static/tools/sim.js"></script><img src="/static/logo.png"><iframe src="other.html"></iframe><script src="//cdn.example.org/lib.js"></script>"#,
            "static/tools/other.html": #"<a href="sim.html">back</a><img src="pic.png">"#,
            "static/tools/pic.png": "PNG",
            "static/tools/sim.css": "body { background: url(bg.png) }",
            "static/tools/bg.png": "PNG",
            "static/tools/sim.js": "fetch('https://api.example.org/data')",
            "static/logo.png": "PNG",
        ])
        let (out, report) = try build(course)
        #expect(report.errors == [] && report.warnings == [])
        #expect(try entries(out, "html/sim.zip") == [
            "coursepack.css", "index.html", "static/logo.png", "static/tools/bg.png", "static/tools/other.html",
            "static/tools/pic.png", "static/tools/sim.css", "static/tools/sim.html", "static/tools/sim.js",
        ])
        // Rewritten relative to where the framed page lands, as the LMS would serve it.
        #expect(try page(out, "html/sim.zip", "static/tools/sim.html")
            == #"<link rel="stylesheet" href="sim.css"><script src="sim.js"></script><img src="../logo.png"><iframe src="other.html"></iframe><script src="https://cdn.example.org/lib.js"></script>"#)
        let entry = try manifest(in: out).blocks[0]
        #expect(entry.requiresNetwork == ["https://cdn.example.org/lib.js", "https://api.example.org"])
    }

    @Test func protocolRelativeAndExternalResourcesAreListedButLinksAreNot() throws {
        let course = try courseWith([("html", "ext", #"<html filename="ext"/>"#)], extra: [
            "html/ext.html": #"<img src="//img.example.org/a.png"><link rel="stylesheet" href="https://fonts.example.org/icons.css"><p style="background: url(https://cdn.example.org/bg.jpg)">x</p><a href="https://docs.example.org/">docs</a><video poster="https://cdn.example.org/poster.jpg"></video>"#,
        ])
        let (out, _) = try build(course)
        let html = try page(out, "html/ext.zip")
        #expect(html.contains(#"<img src="https://img.example.org/a.png">"#))
        #expect(try manifest(in: out).blocks[0].requiresNetwork == [
            "https://img.example.org/a.png", "https://fonts.example.org/icons.css", "https://cdn.example.org/bg.jpg",
            "https://cdn.example.org/poster.jpg",
        ])
    }

    @Test func pagesWithScriptsOrMathLoadTheSharedRuntimeOnce() throws {
        let course = try courseWith([
            ("html", "scripted", #"<html filename="scripted"/>"#),
            ("html", "math", #"<html filename="math"/>"#),
            ("html", "plain", #"<html filename="plain"/>"#),
        ], extra: [
            "html/scripted.html": ##"<p id="x">a</p><script>$("#x").text("b");</script>"##,
            "html/math.html": #"<p>What is \(120 \times 5\)?</p>"#,
            "html/plain.html": "<p>Nothing special.</p>",
        ])
        let (out, _) = try build(course)
        let published = try manifest(in: out)
        let runtime = try #require(published.runtime)
        #expect(runtime.archive.hasPrefix("runtime/") && runtime.archive.hasSuffix(".zip"))
        #expect(published.blocks.map(\.runtime) == [runtime.archive, runtime.archive, nil])
        let folder = "../../" + String(runtime.archive.dropLast(4)) + "/"
        let scripted = try page(out, "html/scripted.zip")
        #expect(scripted.contains("<script src=\"\(folder)jquery.min.js\"></script>\n</head>"))
        #expect(!scripted.contains("katex"))
        let math = try page(out, "html/math.zip")
        #expect(math.contains("<script src=\"\(folder)katex/katex.min.js\"></script>"))
        #expect(!math.contains("jquery"))
        #expect(!(try page(out, "html/plain.zip")).contains("runtime/"))
        let files = try entries(out, runtime.archive)
        #expect(files.contains("jquery.min.js") && files.contains("katex/katex.min.css") && files.contains("coursepack-math.js"))
        #expect(files.contains { $0.hasPrefix("katex/fonts/") && $0.hasSuffix(".woff2") })
        #expect(!files.contains { $0.hasSuffix(".ttf") })
        // The same runtime in the next build: same name, same bytes, not rewritten.
        let before = TestSupport.read(out + "/" + runtime.archive)
        let (_, again) = try build(course, into: out)
        #expect(again.counts.reused == 3)
        #expect(TestSupport.read(out + "/" + runtime.archive) == before)
        #expect(try manifest(in: out).runtime == runtime)
    }

    @Test func transcriptEntitiesAreDecodedOnce() throws {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\nwe&#39;re &quot;here&quot; &amp; now\n"
        let course = try courseWith([("video", "v", #"<video youtube_id_1_0="abc"><transcript language="en" src="t.srt"/></video>"#)],
            extra: ["static/t.srt": srt])
        let (out, _) = try build(course)
        let html = try page(out, "video/v.zip")
        #expect(html.contains("we're &quot;here&quot; &amp; now</li>"))
        #expect(!html.contains("&amp;#39;") && !html.contains("&#39;"))
    }

    @Test func problemsUsingScriptVariablesAreOnlineOnlyAndChoicesStackWithInputSaves() throws {
        let course = try courseWith([
            ("problem", "vars", #"<problem><script type="loncapa/python">x = 5\nanswer = x * 2</script><p>What is $x times 2?</p><numericalresponse answer="$answer"><textline/></numericalresponse></problem>"#),
            ("problem", "choice", #"<problem><multiplechoiceresponse><label>Pick</label><choicegroup><choice correct="true">A long statement</choice><choice correct="false">B</choice></choicegroup></multiplechoiceresponse></problem>"#),
        ])
        let (out, _) = try build(course)
        let blocks = try manifest(in: out).blocks
        #expect(blocks[0].offline == false && blocks[0].reason == "the problem shows values its Python script computes on the server")
        let html = try page(out, "problem/choice.zip")
        #expect(html.contains(#"<label class="coursepack-choice"><input type="radio" name="input_choice_2_1" value="choice_0"> A long statement</label>"#))
        #expect(html.contains(#"<script src="coursepack-problem.js"></script>"#))
        #expect(try page(out, "problem/choice.zip", "coursepack-problem.js").contains(#"form.addEventListener("input", save);"#))
        #expect(try page(out, "problem/choice.zip", "coursepack.css").contains(".coursepack-choice { display: flex;"))
    }

    /// The pages, with and without an LMS to send the reader to, are pinned by the snapshots
    /// `jump-to-a-block-without-an-archive` and `…-with-lms-url`, built from the same course;
    /// here, what is reported: the missing file and the course page no `--lms-url` can reach, but
    /// not the jump to the discussion, which is online only by design.
    @Test func linksToBlocksWithoutAnArchiveOpenTheLMSOrSaySo() throws {
        let leaves = PageSnapshotCase.jumpLeaves.map { ($0.type, $0.name, $0.xml) }
        let (plain, plainReport) = try build(try courseWith(leaves, extra: PageSnapshotCase.jumpFiles))
        #expect(plainReport.warnings.map(\.reference) == ["Not A File", "/courses/course-v1:O+N+r/progress"])
        #expect(try manifest(in: plain).blocks.map(\.archive) == ["html/links.zip", nil])
    }

    @Test func aUnitsStyleOnlyComponentStylesEveryOtherPageOfTheUnit() throws {
        let course = try courseWith([
            ("html", "styles", #"<html filename="styles"/>"#),
            ("html", "text", #"<html filename="text"/>"#),
            ("problem", "q", #"<problem><stringresponse answer="a"><label>Say a</label><textline/></stringresponse></problem>"#),
        ], extra: [
            "html/styles.html": "<!-- unit look -->\n<link rel=\"stylesheet\" href=\"/static/unit.css\">\n<style>p { color: teal }</style>\n",
            "html/text.html": "<p>Hello</p>",
            "static/unit.css": "p { margin: 0 }",
        ])
        let (out, _) = try build(course)
        // The heads the other pages get are pinned by the snapshot `unit-style-only-component`.
        for archive in ["html/text.zip", "problem/q.zip"] {
            #expect(try entries(out, archive).contains("static/unit.css"), "the stylesheet travels with every page it styles: \(archive)")
        }
        // The component itself keeps its elements where it has them, not twice.
        #expect(!(try page(out, "html/styles.zip")).contains("</style>\n</head>"))
    }

    @Test func aVideoLinksItsOnlineRenditionAndPlaysALocalCopyOfItsCDNFile() throws {
        let course = try courseWith([
            ("video", "encoded", #"<video edx_video_id="e1"><video_asset><encoded_video profile="desktop_mp4" url="https://cdn.example.org/e1.mp4"/></video_asset><transcript language="en" src="t.srt"/></video>"#),
            ("video", "copy", #"<video html5_sources="[&quot;https://cdn.example.org/uploads/clip.mp4&quot;]"/>"#),
        ], extra: ["static/t.srt": "1\n00:00:01,000 --> 00:00:02,000\nHi\n", "static/clip.mp4": "MP4"])
        let (out, _) = try build(course)
        #expect(try page(out, "video/encoded.zip").contains(#"This video plays online: <a href="https://cdn.example.org/e1.mp4""#))
        #expect(try entries(out, "video/copy.zip").contains("static/clip.mp4"))
        let blocks = try manifest(in: out).blocks
        #expect(blocks[0].requiresNetwork == ["https://cdn.example.org/e1.mp4"])
        #expect(blocks[1].requiresNetwork == nil)
    }
}

/// Field names as CAPA derives them (capa_problem.py: responses numbered from 2 in document
/// order, inputs from 1 within each; the problem id of a block-v1 key is its url_name; choices
/// named `choice_N`), written out by hand for demo problems.
@Suite struct CAPAFieldNameTests {
    @Test func demoProblemsUseTheLMSFieldNames() throws {
        let (out, _) = try build(TestSupport.demoCourse)
        let unzip = try #require(TestSupport.which("unzip"))
        func page(_ id: String) throws -> String {
            try TestSupport.run(unzip, ["-p", out + "/problem/\(id).zip", "index.html"]).stdout
        }
        func names(_ html: String) -> [String] {
            html.matches(of: /name="(input_[^"]+)"/).map { String($0.output.1) }
        }
        func values(_ html: String) -> [String] {
            html.matches(of: /<input type="(?:radio|checkbox)" name="[^"]+" value="([^"]+)"/).map { String($0.output.1) }
        }
        // Numerical input: one response, one textline.
        #expect(names(try page("3b8100660f3947c198e0a9b35f7c6cf6")) == ["input_3b8100660f3947c198e0a9b35f7c6cf6_2_1"])
        // Checkboxes: the field name ends in [], unnamed choices are choice_<index>.
        let checkboxes = try page("0135258373e648f2b57a80ae06bade61")
        #expect(Set(names(checkboxes)) == ["input_0135258373e648f2b57a80ae06bade61_2_1[]"])
        #expect(values(checkboxes) == ["choice_0", "choice_1", "choice_2", "choice_3", "choice_4"])
        // Multiple choice: one radio group.
        let radios = try page("0895f1b6c0b329e50b90")
        #expect(Set(names(radios)) == ["input_0895f1b6c0b329e50b90_2_1"])
        #expect(values(radios) == ["choice_0", "choice_1", "choice_2", "choice_3"])
        // Eight dropdown responses in a table: responses 2 to 9, input 1 each, option text as value.
        let dropdowns = try page("85f3f7f9b72548af880975112f27817c")
        #expect(names(dropdowns) == (2...9).map { "input_85f3f7f9b72548af880975112f27817c_\($0)_1" })
        #expect(dropdowns.contains(#"<option value="Albert Einstein">Albert Einstein</option>"#))
    }

    @Test func namedChoicesAndSeveralInputsFollowCAPA() throws {
        let course = try courseWith([("problem", "p.1", #"<problem><multiplechoiceresponse><choicegroup><choice name="a">A</choice><choice>B</choice><choice name="c">C</choice><choice>D</choice></choicegroup></multiplechoiceresponse><choiceresponse><checkboxgroup><choice name="x">X</choice><choice>Y</choice></checkboxgroup></choiceresponse><stringresponse answer="a"><textline/><textline/></stringresponse></problem>"#)])
        let (out, _) = try build(course)
        let archive = try #require(try manifest(in: out).blocks.first?.archive)
        let html = try TestSupport.run(try #require(TestSupport.which("unzip")), ["-p", out + "/" + archive, "index.html"]).stdout
        let inputs = html.matches(of: /<input type="([a-z]+)" name="([^"]+)"(?: value="([^"]*)")?/).map { "\($0.output.1) \($0.output.2) \($0.output.3 ?? "")" }
        #expect(inputs == [
            "radio input_p.1_2_1 choice_a", "radio input_p.1_2_1 choice_0", "radio input_p.1_2_1 choice_c", "radio input_p.1_2_1 choice_1",
            "checkbox input_p.1_3_1[] x", "checkbox input_p.1_3_1[] choice_1",
            "text input_p.1_4_1 ", "text input_p.1_4_2 ",
        ])
    }
}
