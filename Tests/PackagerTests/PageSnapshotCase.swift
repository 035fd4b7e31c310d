import Foundation
import Testing
import TestSupport

/// One rendered-page snapshot: a course (a small OLX snippet or the demo course), the archive
/// entries to show, and text that must never be in them whatever the snapshot says.
struct PageSnapshotCase: Sendable, CustomTestStringConvertible {
    struct Leaf: Sendable {
        let type: String
        let name: String
        let xml: String
    }

    enum Source: Sendable {
        /// One unit holding `leaves`, plus `files` (export-relative path → text).
        case snippet([Leaf], files: [String: String] = [:], lmsURL: String? = nil)
        case demoCourse
    }

    /// An archive's entry names (`entry` nil) or one entry's bytes.
    struct Shown: Sendable {
        let archive: String
        let entry: String?

        static func page(_ archive: String, _ entry: String = "index.html") -> Shown { Shown(archive: archive, entry: entry) }
        static func listing(_ archive: String) -> Shown { Shown(archive: archive, entry: nil) }
    }

    let name: String
    let source: Source
    let shown: [Shown]
    /// Answers and other text a page must never carry: checked apart from the snapshot, so
    /// accepting a new snapshot cannot accept a leak.
    var absent: [String] = []

    var fileName: String { name + ".txt" }
    var testDescription: String { name }
}

extension PageSnapshotCase {
    /// A problem of every kind CAPA grades offline-safely, wrapped in markup, with every kind of
    /// answer, hint and solution, each carrying a SECRET marker that must not reach the page.
    static let problemOfSeveralKinds = """
        <problem display_name="Quiz" markdown="SECRET-MARKDOWN [x] right">
          <p>Intro with <img src="/static/q.png"/></p>
          <div class="wrapper">
            <multiplechoiceresponse>
              <label>Pick one</label>
              <description>Only one is right.</description>
              <choicegroup type="MultipleChoice">
                <choice correct="false">Wrong choice<choicehint>SECRET-HINT-1</choicehint></choice>
                <choice correct="true">Right choice<choicehint>SECRET-HINT-2</choicehint></choice>
              </choicegroup>
            </multiplechoiceresponse>
          </div>
          <choiceresponse><label>Pick many</label><checkboxgroup><choice correct="true">A</choice><choice correct="false">B</choice></checkboxgroup>
            <compoundhint value="A">SECRET-COMPOUND</compoundhint></choiceresponse>
          <optionresponse><label>Choose</label><optioninput options="('Red','Blue')" correct="SECRET-OPTION"/></optionresponse>
          <stringresponse answer="SECRET-STRING" type="ci"><label>Type it</label><additional_answer answer="SECRET-ADDITIONAL"/><textline size="20"/>
            <stringequalhint answer="x">SECRET-EQUALHINT</stringequalhint></stringresponse>
          <numericalresponse answer="31415926"><label>Number</label><responseparam type="tolerance" default="5%"/><formulaequationinput/></numericalresponse>
          <solution><div class="detailed-solution">SECRET-SOLUTION</div></solution>
          <demandhint><hint>SECRET-DEMANDHINT</hint></demandhint>
          <script type="loncapa/python">SECRET-SCRIPT = 1</script>
        </problem>
        """

    static let answerMarkers = ["SECRET", "31415926", "correct=", "<solution", "choicehint", "tolerance", "loncapa/python"]

    static let captions = "1\r\n00:00:01,000 --> 00:00:02,500\r\nHello <there>\r\n\r\n2\r\n00:01:00,000 --> 00:01:03,000\r\nSecond line\r\n"

    /// Every case, in the order of their files. A snapshot file no case names fails the suite.
    static let all: [PageSnapshotCase] = [
        PageSnapshotCase(
            name: "html-static-links-and-stylesheet",
            source: .snippet([Leaf(type: "html", name: "links", xml: #"<html filename="links" display_name="Links &amp; styles"/>"#)], files: [
                "html/links.html": """
                    <link rel="stylesheet" href="/static/css/page.css">
                    <p>Read <a href="/static/Course%20Handout.pdf?v=2#page=3">the handout</a>, see
                    <img src="/asset-v1:O+N+r+type@asset+block@diagram.png" alt="Diagram" srcset="/static/diagram.png 1x, /static/diagram@2x.png 2x">
                    and <a href="/c4x/O/N/asset/notes.txt">the notes</a>; <a href="https://docs.example.org/guide?a=1&amp;b=2#top">the guide</a>,
                    <a href="mailto:staff@example.org">mail us</a>, <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="">.</p>
                    <p style="background: url('/static/bg.png')">Styled</p>
                    <a href="/static/missing.pdf">A file that is not there</a>
                    """,
                "static/css/page.css": "@import url(\"fonts.css\");\nbody { background: url(/static/bg.png) }\n.logo { background: url('../logo.png') }\n",
                "static/css/fonts.css": "@font-face { font-family: X; src: url(x.woff2) }\n",
                "static/css/x.woff2": "WOFF2", "static/bg.png": "PNG", "static/logo.png": "PNG", "static/Course Handout.pdf": "PDF",
                "static/diagram.png": "PNG", "static/diagram@2x.png": "PNG", "static/notes.txt": "notes",
            ]),
            shown: [.listing("html/links.zip"), .page("html/links.zip"), .page("html/links.zip", "static/css/page.css")]),
        PageSnapshotCase(
            name: "html-framed-page",
            source: .snippet([Leaf(type: "html", name: "sim", xml: #"<html filename="sim"/>"#)], files: [
                "html/sim.html": #"<iframe src="/static/tools/sim.html" title="Simulation"></iframe>"#,
                "static/tools/sim.html": #"<link rel="stylesheet" href="sim.css"><script src="/static/tools/sim.js"></script><img src="/static/logo.png"><iframe src="other.html"></iframe><script src="//cdn.example.org/lib.js"></script>"#,
                "static/tools/other.html": #"<a href="sim.html">back</a><img src="pic.png">"#,
                "static/tools/pic.png": "PNG", "static/tools/sim.css": "body { background: url(bg.png) }", "static/tools/bg.png": "PNG",
                "static/tools/sim.js": "fetch('https://api.example.org/data')", "static/logo.png": "PNG",
            ]),
            shown: [
                .listing("html/sim.zip"), .page("html/sim.zip"), .page("html/sim.zip", "static/tools/sim.html"),
                .page("html/sim.zip", "static/tools/other.html"), .page("html/sim.zip", "static/tools/sim.css"),
            ]),
        PageSnapshotCase(
            name: "problem-several-kinds",
            source: .snippet([Leaf(type: "problem", name: "quiz", xml: problemOfSeveralKinds)], files: ["static/q.png": "PNG"]),
            shown: [.listing("problem/quiz.zip"), .page("problem/quiz.zip")],
            absent: answerMarkers),
        PageSnapshotCase(
            name: "video-local-with-captions",
            source: .snippet([Leaf(type: "video", name: "local", xml: #"<video display_name="Local" html5_sources="[&quot;/static/clip.mp4&quot;]" transcripts="{&quot;en&quot;: &quot;clip-en.srt&quot;, &quot;fr&quot;: &quot;clip-fr.srt&quot;}"/>"#)],
                files: ["static/clip.mp4": "MP4DATA", "static/clip-en.srt": captions, "static/clip-fr.srt": captions]),
            shown: [.listing("video/local.zip"), .page("video/local.zip")]),
        PageSnapshotCase(
            name: "video-online-with-transcript",
            source: .snippet([Leaf(type: "video", name: "youtube", xml: #"<video display_name="YT" youtube="1.00:abc123XYZ" youtube_id_1_0="abc123XYZ"><transcript language="en" src="clip-en.srt"/></video>"#)],
                files: ["static/clip-en.srt": captions]),
            shown: [.listing("video/youtube.zip"), .page("video/youtube.zip")]),
        PageSnapshotCase(
            name: "math-and-scripts-use-the-runtime",
            source: .snippet([
                Leaf(type: "html", name: "math", xml: #"<html filename="math"/>"#),
                Leaf(type: "html", name: "scripted", xml: #"<html filename="scripted"/>"#),
            ], files: [
                "html/math.html": #"<p>What is \(120 \times 5\)?</p><p>$$\sum_{i=1}^{n} i$$</p><script type="math/tex; mode=display">x^2</script>"#,
                "html/scripted.html": ##"<p id="x">a</p><script>$("#x").text("b");</script>"##,
            ]),
            shown: [.page("html/math.zip"), .page("html/scripted.zip")]),
        PageSnapshotCase(
            name: "jump-to-a-block-without-an-archive",
            source: .snippet(jumpLeaves, files: jumpFiles),
            shown: [.page("html/links.zip")]),
        PageSnapshotCase(
            name: "jump-to-a-block-without-an-archive-with-lms-url",
            source: .snippet(jumpLeaves, files: jumpFiles, lmsURL: "https://lms.example.org/"),
            shown: [.page("html/links.zip")]),
        PageSnapshotCase(
            name: "unit-style-only-component",
            source: .snippet([
                Leaf(type: "html", name: "styles", xml: #"<html filename="styles"/>"#),
                Leaf(type: "html", name: "text", xml: #"<html filename="text"/>"#),
                Leaf(type: "problem", name: "q", xml: #"<problem><stringresponse answer="a"><label>Say a</label><textline/></stringresponse></problem>"#),
            ], files: [
                "html/styles.html": "<!-- unit look -->\n<link rel=\"stylesheet\" href=\"/static/unit.css\">\n<style>p { color: teal }</style>\n",
                "html/text.html": "<p>Hello</p>",
                "static/unit.css": "p { margin: 0 }",
            ]),
            shown: [.page("html/styles.zip"), .listing("html/text.zip"), .page("html/text.zip"), .page("problem/q.zip")]),
        PageSnapshotCase(
            name: "demo-html-welcome", source: .demoCourse,
            shown: [.listing("html/a01fc100e5e64fc5bbca09daa190cfee.zip"), .page("html/a01fc100e5e64fc5bbca09daa190cfee.zip")]),
        PageSnapshotCase(
            name: "demo-problem-checkboxes", source: .demoCourse,
            shown: [.page("problem/0135258373e648f2b57a80ae06bade61.zip")], absent: demoAnswerMarkers),
        PageSnapshotCase(
            name: "demo-problem-dropdowns", source: .demoCourse,
            shown: [.page("problem/85f3f7f9b72548af880975112f27817c.zip")], absent: demoAnswerMarkers),
        PageSnapshotCase(
            name: "demo-video-youtube-with-transcript", source: .demoCourse,
            shown: [.page("video/0d9ca68c609b4251bb3eacccd28dea19.zip")]),
        PageSnapshotCase(
            name: "demo-video-local-copy-of-a-cdn-file", source: .demoCourse,
            shown: [.listing("video/2fe12c0703484743a51fe4612a640563.zip"), .page("video/2fe12c0703484743a51fe4612a640563.zip")]),
    ]

    static let jumpLeaves = [
        Leaf(type: "html", name: "links", xml: #"<html filename="links"/>"#),
        Leaf(type: "discussion", name: "talk", xml: #"<discussion discussion_id="d"/>"#),
    ]
    static let jumpFiles = ["html/links.html": #"<a href="/jump_to_id/talk">Discuss</a> <a href="Not A File">broken</a> <a href="/courses/course-v1:O+N+r/progress">Progress</a>"#]

    static let demoAnswerMarkers = ["correct=\"true\"", "correct=\"True\"", "<solution", "<choicehint", "detailed-solution", "loncapa/python"]
}
