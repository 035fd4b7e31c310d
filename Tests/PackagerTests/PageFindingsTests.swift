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
        #expect(report.warnings.contains { $0.block == id("a") && $0.message.contains("more distinct network resources") })

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
