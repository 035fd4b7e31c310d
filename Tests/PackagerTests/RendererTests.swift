import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// A course with one vertical holding `leaves` (url_name → definition XML), plus `extra` files.
func courseWith(_ leaves: [(type: String, name: String, xml: String)], extra: [String: String] = [:]) throws -> String {
    let root = TestSupport.temporaryFolder("course")
    var files = [
        "course.xml": #"<course url_name="r" org="O" course="N"/>"#,
        "course/r.xml": #"<course language="en"><chapter url_name="c"/></course>"#,
        "chapter/c.xml": #"<chapter><sequential url_name="s"/></chapter>"#,
        "sequential/s.xml": #"<sequential><vertical url_name="v"/></sequential>"#,
        "vertical/v.xml": "<vertical>" + leaves.map { "<\($0.type) url_name=\"\($0.name)\"/>" }.joined() + "</vertical>",
    ]
    for leaf in leaves { files["\(leaf.type)/\(leaf.name).xml"] = leaf.xml }
    for (path, text) in extra { files[path] = text }
    try TestSupport.write(files, under: root)
    return root
}

/// Checks each archive's index.html with Python's html.parser: a proper shell, and every
/// relative link present in the archive.
func pageProblems(_ out: String) throws -> String {
    let script = """
        import glob, os, sys, zipfile
        from html.parser import HTMLParser
        from urllib.parse import unquote, urlsplit
        class Page(HTMLParser):
            def __init__(self):
                super().__init__(); self.tags = []; self.links = []; self.meta = {}; self.lang = None; self.title = ""; self.in_title = False
            def handle_starttag(self, tag, attrs):
                a = dict(attrs); self.tags.append(tag)
                if tag == "html": self.lang = a.get("lang")
                if tag == "meta" and a.get("name"): self.meta[a["name"]] = a.get("content")
                if tag == "title": self.in_title = True
                for k in ("src", "href", "poster"):
                    if a.get(k): self.links.append(a[k])
            def handle_endtag(self, tag):
                if tag == "title": self.in_title = False
            def handle_data(self, data):
                if self.in_title: self.title += data
            def handle_decl(self, decl): self.doctype = decl
        problems = []
        for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.zip"))):
            if os.path.basename(os.path.dirname(path)) == "runtime": continue
            z = zipfile.ZipFile(path); names = set(z.namelist())
            text = z.read("index.html").decode("utf-8", "replace")
            p = Page(); p.doctype = None; p.feed(text); p.close()
            if (p.doctype or "").lower() != "doctype html": problems.append(f"{path}: no <!DOCTYPE html>")
            for t in ("html", "head", "body", "title", "main"):
                if t not in p.tags: problems.append(f"{path}: no <{t}>")
            if not p.lang: problems.append(f"{path}: no lang")
            if "width=device-width" not in (p.meta.get("viewport") or ""): problems.append(f"{path}: no viewport meta")
            if not p.title.strip(): problems.append(f"{path}: empty title")
            for link in p.links:
                u = urlsplit(link)
                # Links coursepack writes; others are the course's own (reported when broken).
                if not link.startswith(("static/", "transcripts/", "coursepack.css", "../../")): continue
                target = os.path.normpath(unquote(u.path))
                if target.startswith("../../runtime/"):
                    parts = target.split("/")
                    if not os.path.exists(os.path.join(sys.argv[1], "runtime", parts[3] + ".zip")): problems.append(f"{path}: link to a missing runtime {link}")
                elif target.startswith("../../"):
                    other = os.path.join(sys.argv[1], os.path.dirname(target[6:]) + ".zip")
                    if not os.path.exists(other): problems.append(f"{path}: link to missing block {link}")
                elif target not in names: problems.append(f"{path}: {link} is not in the archive")
        print("\\n".join(problems))
        """
    let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, out])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite struct RendererTests {
    /// What the page shows (labels, descriptions, every kind of input, CAPA's names) is pinned by
    /// the snapshot `problem-several-kinds`, built from the same problem; here, what it must never show.
    @Test func problemsBecomeFormsWithoutAnyAnswer() throws {
        let problem = PageSnapshotCase.problemOfSeveralKinds
        let course = try courseWith([("problem", "quiz", problem)], extra: ["static/q.png": "PNG"])
        let (out, report) = try build(course)
        #expect(report.errors == [])
        let text = try TestSupport.allArchiveText(out)
        for secret in ["SECRET", "31415926", "correct=", "<solution", "choicehint", "tolerance"] {
            #expect(!text.contains(secret), "\(secret) leaked into the bundle")
        }
        #expect(try pageProblems(out) == "")
    }

    @Test func problemsThatNeedTheServerAreOnlineOnly() throws {
        let course = try courseWith([
            ("problem", "custom", "<problem><customresponse cfn=\"check\"><textline/></customresponse><script>def check(): pass</script></problem>"),
            ("problem", "js", "<problem><customresponse><jsinput gradefn=\"g\" html_file=\"/static/x.html\"/></customresponse></problem>"),
            ("problem", "empty", "<problem><p>No question here.</p></problem>"),
        ])
        let (out, _) = try build(course)
        let blocks = try manifest(in: out).blocks
        #expect(blocks.allSatisfy { $0.offline == false && $0.archive == nil })
        #expect(blocks.map(\.reason) == [
            "custom Python-graded problems need the server",
            "custom Python-graded problems need the server",
            "this problem has no question coursepack can show offline",
        ])
    }

    /// The pages themselves are pinned by the snapshots `video-local-with-captions` and
    /// `video-online-with-transcript`, built from the same videos and captions.
    @Test func localVideosPlayWithTracksAndExternalOnesKeepTheirTranscript() throws {
        let srt = PageSnapshotCase.captions
        let course = try courseWith([
            ("video", "local", #"<video display_name="Local" html5_sources="[&quot;/static/clip.mp4&quot;]" transcripts="{&quot;en&quot;: &quot;clip-en.srt&quot;, &quot;fr&quot;: &quot;clip-fr.srt&quot;}"/>"#),
            ("video", "youtube", #"<video display_name="YT" youtube="1.00:abc123XYZ" youtube_id_1_0="abc123XYZ"><transcript language="en" src="clip-en.srt"/></video>"#),
            ("video", "nothing", #"<video display_name="None" youtube_id_1_0="zzz" html5_sources="[&quot;https://cdn.example.org/v.mp4&quot;]"/>"#),
        ], extra: ["static/clip.mp4": "MP4DATA", "static/clip-en.srt": srt, "static/clip-fr.srt": srt])
        let (out, report) = try build(course)
        #expect(report.errors == [])
        let blocks = try manifest(in: out).blocks
        let unzip = try #require(TestSupport.which("unzip"))

        // Captions travel in the page (a <track> file does not load from file://): no caption files.
        let local = try TestSupport.run(unzip, ["-Z1", out + "/video/local.zip"]).stdout.split(separator: "\n")
        #expect(local == ["coursepack.css", "index.html", "static/clip.mp4"])
        let page = try TestSupport.run(unzip, ["-p", out + "/video/local.zip", "index.html"]).stdout
        #expect(!page.contains("<track"))
        #expect(blocks[0].requiresNetwork == nil)

        #expect(blocks[1].requiresNetwork == ["https://www.youtube.com/watch?v=abc123XYZ"])

        #expect(blocks[2].offline == false && blocks[2].reason == "the video has no local file and no transcript to show offline")
        #expect(try pageProblems(out) == "")
    }

    @Test func externalIframesBecomeLinksAndAreListed() throws {
        let course = try courseWith([("html", "embeds", #"<html filename="embeds"/>"#)], extra: [
            "html/embeds.html": #"<p>Before</p><iframe title="A map" src="https://maps.example.org/embed?q=1&amp;z=2" width="600"></iframe><p>After \(x^2\)</p><iframe src="/static/local.html"></iframe>"#,
            "static/local.html": "<p>local</p>",
        ])
        let (out, _) = try build(course)
        let unzip = try #require(TestSupport.which("unzip"))
        let page = try TestSupport.run(unzip, ["-p", out + "/html/embeds.zip", "index.html"]).stdout
        #expect(page.contains(#"<p>Before</p><p class="coursepack-online-only"><a href="https://maps.example.org/embed?q=1&amp;z=2" target="_blank" rel="noopener">Open “A map” online</a></p><p>After"#))
        #expect(page.contains(#"<iframe src="static/local.html"></iframe>"#))
        // Math renders offline from the runtime archive, so it is no longer a network need.
        let entry = try manifest(in: out).blocks[0]
        #expect(entry.requiresNetwork == ["https://maps.example.org/embed?q=1&z=2"])
        #expect(entry.runtime?.hasPrefix("runtime/") == true)
    }

    @Test func theDemoCourseHasNoAnswersAndWellFormedPages() throws {
        let (out, _) = try build(TestSupport.demoCourse)
        let blocks = try manifest(in: out).blocks
        for type in ["html", "problem", "video"] {
            #expect(blocks.filter { $0.type == type }.allSatisfy { $0.archive != nil || ($0.offline == false && $0.reason != nil) })
        }
        #expect(blocks.filter { $0.type == "problem" && $0.archive != nil }.count >= 20, "most demo problems render offline")
        // Five demo videos have transcripts, and one links a CDN file whose copy is in static/ (it
        // plays locally); five are YouTube-only with none, so they are online only.
        #expect(blocks.filter { $0.type == "video" && $0.archive != nil }.count == 6)
        #expect(blocks.filter { $0.type == "video" && $0.archive == nil }.allSatisfy {
            $0.reason == "the video has no local file and no transcript to show offline" })
        let text = try TestSupport.allArchiveText(out)
        for leak in ["correct=\"true\"", "correct=\"True\"", "<solution", "<choicehint", "detailed-solution", "loncapa/python"] {
            #expect(!text.contains(leak), "\(leak) leaked")
        }
        let problems = try pageProblems(out)
        #expect(problems == "", "\(problems)")
    }
}
