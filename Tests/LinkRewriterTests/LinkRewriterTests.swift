import Foundation
import LinkRewriter
import Testing

/// Rewrites every asset reference to `static/<name>` so the tests see exactly which bytes moved.
func rewriteAssets(_ html: String, as document: LinkRewriter.Document = .html) -> String {
    let bytes = Array(html.utf8)
    let out = LinkRewriter.rewrite(bytes, references: LinkRewriter.references(in: bytes, as: document)) { reference in
        switch LinkTarget.classify(reference.url) {
        case .asset(let name, let suffix): return .replace("static/" + PercentEncoding.encodePath(name) + suffix)
        case .block(let id, let suffix): return .replace("../../block/\(id)/index.html" + suffix)
        default: return .keep
        }
    }
    return String(decoding: out, as: UTF8.self)
}

@Suite struct LinkRewriterTests {
    @Test(arguments: [
        (#"<img src="/static/a.png">"#, #"<img src="static/a.png">"#),
        (#"<IMG SRC='/static/a.png'>"#, #"<IMG SRC='static/a.png'>"#),
        (#"<img src=/static/a.png alt=x>"#, #"<img src=static/a.png alt=x>"#),
        (#"<a href="/static/Learning%20Goals.pdf">"#, #"<a href="static/Learning%20Goals.pdf">"#),
        (#"<a href="/static/Learning Goals.pdf">"#, #"<a href="static/Learning%20Goals.pdf">"#),
        (#"<a href="static/notes.pdf">"#, #"<a href="static/notes.pdf">"#),
        (#"<video poster="/static/p.jpg"></video>"#, #"<video poster="static/p.jpg"></video>"#),
        (#"<object data="/static/s.svg"></object>"#, #"<object data="static/s.svg"></object>"#),
        (#"<form action="/static/f.html"></form>"#, #"<form action="static/f.html"></form>"#),
        (#"<td background="/static/bg.gif">"#, #"<td background="static/bg.gif">"#),
        (#"<a href="/asset-v1:Org+Num+Run+type@asset+block@doc.pdf">"#, #"<a href="static/doc.pdf">"#),
        (#"<a href="/asset-v1:Org+Num+OtherRun+type@asset+block@doc.pdf">"#, #"<a href="static/doc.pdf">"#),
        (#"<a href="/c4x/Org/Num/asset/doc.pdf">"#, #"<a href="static/doc.pdf">"#),
        (#"<a href="/static/doc.pdf?raw=1&amp;v=2#page=3">"#, #"<a href="static/doc.pdf?raw=1&v=2#page=3">"#),
        (#"<a href="/jump_to_id/abc123">"#, #"<a href="../../block/abc123/index.html">"#),
        (#"<img srcset="/static/a.png 1x, /static/b.png 2x">"#, #"<img srcset="static/a.png 1x, static/b.png 2x">"#),
        (#"<img srcset="/static/a.png 1x,/static/b.png 2x">"#, #"<img srcset="static/a.png 1x,static/b.png 2x">"#),
        (#"<div style="background: url(/static/bg.png)">"#, #"<div style="background: url(static/bg.png)">"#),
        (#"<div style="background: url(&quot;/static/bg.png&quot;)">"#, #"<div style="background: url(&quot;static/bg.png&quot;)">"#),
        (#"<style>.a { background: url('/static/bg.png') } @import "/static/t.css";</style>"#,
         #"<style>.a { background: url('static/bg.png') } @import "static/t.css";</style>"#),
        (#"<div data-config="{&quot;img&quot;: &quot;/static/x.png&quot;}">"#, #"<div data-config="{&quot;img&quot;: &quot;static/x.png&quot;}">"#),
        (#"<script>var u = "/static/x.js"; load('/static/y.json');</script>"#, #"<script>var u = "static/x.js"; load('static/y.json');</script>"#),
        (#"<button onclick="open('/static/z.pdf')">"#, #"<button onclick="open('static/z.pdf')">"#),
    ])
    func rewritesEveryFormAndLocation(input: String, expected: String) {
        #expect(rewriteAssets(input) == expected)
    }

    @Test(arguments: [
        #"<a href="https://example.org/static/a.png">"#,
        #"<img src="data:image/png;base64,AAAA">"#,
        #"<a href="mailto:x@example.org">"#,
        ##"<a href="#section">"##,
        #"<a href="//cdn.example.org/x.js">"#,
        #"<!-- <img src="/static/commented.png"> -->"#,
        #"<p>Text mentioning /static/a.png outside any tag</p>"#,
        #"<pre>&lt;img src="/static/escaped.png"&gt;</pre>"#,
    ])
    func leavesOtherURLsAlone(input: String) {
        #expect(rewriteAssets(input) == input)
    }

    @Test func keepsEveryOtherByteIdentical() {
        let page = "\u{FEFF}<P CLASS=x>caf\u{E9}\r\n<img  src = \"/static/a.png\"   alt='<b>' >\r\n<br/><unclosed <!-- c --> &nbsp; </div></div>"
        let expected = page.replacingOccurrences(of: "/static/a.png", with: "static/a.png")
        #expect(rewriteAssets(page) == expected)
    }

    @Test func invalidUTF8AroundLinksSurvives() {
        let bytes: [UInt8] = Array("<p>".utf8) + [0xFF, 0xFE, 0xE9] + Array("<img src=\"/static/a.png\"></p>".utf8)
        let out = LinkRewriter.rewrite(bytes, references: LinkRewriter.references(in: bytes, as: .html)) { _ in .replace("X") }
        #expect(out == Array("<p>".utf8) + [0xFF, 0xFE, 0xE9] + Array("<img src=\"X\"></p>".utf8))
    }

    @Test func cssImportsAndURLs() {
        let css = #"@import url("theme.css"); @import 'print.css'; /* url(/static/no.png) */ .a{background:url( ../img/x.png )}"#
        let urls = LinkRewriter.references(in: Array(css.utf8), as: .css).map(\.url)
        #expect(urls == ["theme.css", "print.css", "../img/x.png"])
    }

    @Test func classifiesTargets() {
        #expect(LinkTarget.classify("/static/a%20b.png?x=1") == .asset(name: "a b.png", suffix: "?x=1"))
        #expect(LinkTarget.classify("/c4x/O/N/asset/sub/a.png") == .asset(name: "sub/a.png", suffix: ""))
        #expect(LinkTarget.classify("/jump_to/block-v1:O+N+R+type@html+block@x") == .block(id: "block-v1:O+N+R+type@html+block@x", suffix: ""))
        #expect(LinkTarget.classify("/courses/course-v1:O+N+R/progress") == .lmsPath("/courses/course-v1:O+N+R/progress"))
        #expect(LinkTarget.classify("javascript:void(0)") == .untouched)
        #expect(LinkTarget.classify("../img/a%20b.png?v=2#x") == .relative(path: "../img/a b.png", suffix: "?v=2#x"))
    }

    @Test func percentEncodingRoundTrips() {
        for name in ["Learning Goals.pdf", "ünïcødé/日本語.png", "a#b?c%d.txt"] {
            #expect(PercentEncoding.decode(PercentEncoding.encodePath(name)) == name)
        }
        #expect(PercentEncoding.encodePath("a b/c.png") == "a%20b/c.png")
    }

    @Test func elementsAreFoundWhetherClosedOrNot() {
        let page = Array(#"<iframe src="a"></iframe><IFRAME SRC='b'>x</IFRAME><iframe src=c><p><iframe src="d">"#.utf8)
        let found = HTMLScanner.elements(named: "iframe", in: page)
        #expect(found.map { $0.attributes["src"] } == ["a", "b", "c", "d"])
        #expect(found.map { String(decoding: page[$0.range], as: UTF8.self) } == [
            #"<iframe src="a"></iframe>"#, "<IFRAME SRC='b'>x</IFRAME>", "<iframe src=c>", #"<iframe src="d">"#,
        ])
    }
}
