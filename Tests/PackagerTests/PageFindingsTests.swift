import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// A page's references are many; what a build keeps of them is bounded: warnings, network loads
/// and the names its memo depends on. A hostile page of millions of broken references once
/// took gigabytes to build and left as much in the build's state.
@Suite struct PageFindingsTests {
    static let references = 6000

    /// Block a: broken images, external loads and links naming no block, each thousands of times;
    /// block b: a stylesheet of thousands of broken url()s.
    func floodedCourse() throws -> String {
        let course = try fourBlockCourse()
        var page = "<p>Block a</p>"
        for index in 0..<Self.references {
            page += #"<img src="/static/missing-\#(index).png"><img src="https://cdn.example.org/\#(index).png"><a href="/jump_to_id/nowhere-\#(index)">x</a>"#
        }
        var sheet = ""
        for index in 0..<Self.references { sheet += "p.c\(index) { background: url(/static/gone-\(index).png) }\n" }
        try TestSupport.write([
            "html/a.html": page, "static/flood.css": sheet,
            "html/b.html": #"<link rel="stylesheet" href="/static/flood.css"><p>Block b</p>"#,
        ], under: course)
        return course
    }

    @Test func aFloodOfReferencesLeavesBoundedWarningsNetworkAndState() throws {
        let course = try floodedCourse()
        let (out, report) = try build(course)
        #expect(report.errors == [])
        for name in ["a", "b"] {
            let warnings = report.warnings.filter { $0.block == id(name) }
            #expect(warnings.count <= 22, "\(name): \(warnings.count) warnings")
            #expect(warnings.contains { $0.message.contains("more warnings of this block are not listed") }, "\(name) says how many it left out")
        }
        let entry = try #require(try manifest(in: out).blocks.first { $0.usageID == id("a") })
        #expect(entry.requiresNetwork?.count == 100)
        #expect(report.warnings.contains { $0.block == id("a") && $0.message.contains("more network loads of the page") })

        let state = BuildOptions.defaultStateFolder(forOutput: out)
        let stateBytes = TestSupport.files(under: state).reduce(0) { $0 + TestSupport.read(state + "/" + $1).count }
        #expect(stateBytes < 200_000, "the build's state holds \(stateBytes) bytes")

        let (_, again) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(again.counts.rendered == 0 && again.counts.reused == 4)
        #expect(again.warnings == report.warnings)
    }

    /// A page that looks up more names than its memo lists depends on every target: a block
    /// added under one of those names is found, and the page links to it.
    @Test func aPageLookingUpTooManyNamesIsMadeAgainWhenAnyTargetChanges() throws {
        let course = try floodedCourse()
        let (out, _) = try build(course)
        #expect(try pageText("html/a/index.html", in: out).contains("#coursepack-online-only"))
        try TestSupport.write([
            "html/nowhere-5999.xml": #"<html filename="e" display_name="Block e"/>"#, "html/e.html": "<p>Block e</p>",
            "vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="b"/><html url_name="c"/><html url_name="d"/><html url_name="nowhere-5999"/></vertical>"#,
        ], under: course)
        let (_, added) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(added.errors == [])
        #expect(added.counts.rendered == 2, "the new block, and a, whose links looked up too many names to list")
        #expect(try pageText("html/a/index.html", in: out).contains("../../html/nowhere-5999/index.html"))
    }
}

/// Bounds by size, not only by count: long references, long URLs, a unit's shared head, the
/// files a script loads by name, and fresh files too large to hash.
@Suite struct PageFindingsSizeTests {
    @Test func longReferencesAndURLsAreCutOrLeftOutOfReportStateAndManifest() throws {
        let course = try fourBlockCourse()
        // Not one repeated letter: a reference that deflates 500 times over makes its block an archive a client refuses.
        let long = (0..<5600).map { _ in UUID().uuidString }.joined()
        var sheet = ""
        for index in 0..<20 { sheet += "p.c\(index) { background: url(/static/\(index)\(long).png) } p.n\(index) { background: url(https://cdn.example.org/\(index)\(long).png) }\n" }
        var page = ""
        for _ in 0..<3 { for index in 0..<150 { page += #"<img src="https://img.example.org/\#(index).png">"# } }
        try TestSupport.write([
            "static/long.css": sheet, "html/a.html": #"<link rel="stylesheet" href="/static/long.css"><p>a</p>"#,
            "html/b.html": #"<link rel="stylesheet" href="/static/long.css"><p>b</p>"#, "html/c.html": page,
        ], under: course)
        let (out, report) = try build(course)
        #expect(report.errors == [])
        #expect(report.warnings.allSatisfy { ($0.reference?.utf8.count ?? 0) < 1100 && $0.message.utf8.count < 1100 })
        #expect(report.warnings.contains { $0.reference?.hasSuffix("… (cut)") == true })
        let entries = try manifest(in: out).blocks
        let a = try #require(entries.first { $0.usageID == id("a") })
        #expect((a.requiresNetwork ?? []).allSatisfy { $0.utf8.count <= 2048 })
        #expect(TestSupport.read(out + "/manifest.json").count < 200_000)
        #expect(report.warnings.contains { $0.block == id("a") && $0.message.hasPrefix("20 more network loads of the page") })
        #expect(report.warnings.contains { $0.block == id("c") && $0.message.hasPrefix("150 more network loads of the page, repeats included") })
        let state = BuildOptions.defaultStateFolder(forOutput: out)
        let stateBytes = TestSupport.files(under: state).reduce(0) { $0 + TestSupport.read(state + "/" + $1).count }
        #expect(stateBytes < 300_000, "the build's state holds \(stateBytes) bytes")
    }

    /// A unit's style-only block larger than the limit is not copied into its siblings' pages.
    @Test func aLargeStyleOnlyBlockIsNotCopiedIntoEverySiblingPage() throws {
        let course = try fourBlockCourse()
        let script = "<script>var x = \"" + String(repeating: "y", count: 300_000) + "\";</script>"
        try TestSupport.write(["html/d.html": script], under: course)
        let (out, report) = try build(course)
        #expect(report.errors == [])
        #expect(report.warnings.contains { $0.message.contains("more than the 256 KiB copied into each of its other pages") })
        #expect(try pageText("html/a/index.html", in: out).utf8.count < 50_000)

        try TestSupport.write(["html/d.html": "<script>var small = 1;</script>"], under: course)
        let (shared, _) = try build(course)
        #expect(try pageText("html/a/index.html", in: shared).contains("var small = 1;"), "a small one still is")
    }

    /// Files a script names are checked by size before they are read, and reported even when
    /// none can be carried.
    @Test func scriptLoadedFilesTooLargeToCarryAreReportedWhenNoneIsCarried() throws {
        let course = try fourBlockCourse()
        try TestSupport.write(["html/a.html": #"<p>a</p><script>d3.json("data.json", draw)</script>"#], under: course)
        let data = course + "/static/data.json"
        #expect(FileManager.default.createFile(atPath: data, contents: nil))
        #expect(truncate(data, 60 << 20) == 0)
        let (_, report) = try build(course)
        #expect(report.warnings.contains { $0.block == id("a") && $0.file == "static/data.json" && $0.message.contains("too large") }, "\(report.warnings)")
    }

    /// A video page carries its transcripts up to 8 MiB, each file parsed once; the rest are
    /// said on the page to be online.
    @Test func aVideoCarriesTranscriptsUpToItsBoundAndSaysWhatStaysOnline() throws {
        let course = try fourBlockCourse()
        var srt = ""
        var cue = 0
        while srt.utf8.count < 1 << 20 {
            cue += 1
            srt += "\(cue)\n00:00:01,000 --> 00:00:02,000\nline \(cue) \(UUID().uuidString)\n\n"
        }
        let languages = (0..<20).map { "l\($0)" }
        let map = "{" + languages.map { "&quot;\($0)&quot;: &quot;t.srt&quot;" }.joined(separator: ", ") + "}"
        try TestSupport.write([
            "static/t.srt": srt, "static/v.mp4": "ftypmp42 video",
            "vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="b"/><html url_name="c"/><html url_name="d"/><video url_name="vid"/></vertical>"#,
            "video/vid.xml": #"<video display_name="V" html5_sources="[&quot;/static/v.mp4&quot;]" transcripts="\#(map)"/>"#,
        ], under: course)
        let (out, report) = try build(course)
        #expect(report.errors == [])
        let page = try pageText("video/vid/index.html", in: out)
        #expect(page.utf8.count < 40 << 20, "\(page.utf8.count) bytes")
        #expect(page.contains("13 more transcripts are online only"), "\(page.prefix(600))")
    }
}
