import CourseExport
import Foundation
import IncrementalBuild
import Manifest
import Packager
import Testing
import TestSupport
import ZipArchive

/// A course of four html blocks, three of which show `shared.png`.
func fourBlockCourse() throws -> String {
    let root = TestSupport.temporaryFolder("course")
    var files = [
        "course.xml": #"<course url_name="r" org="O" course="N"/>"#,
        "course/r.xml": #"<course><chapter url_name="c"/></course>"#,
        "chapter/c.xml": #"<chapter><sequential url_name="s"/></chapter>"#,
        "sequential/s.xml": #"<sequential><vertical url_name="v"/></sequential>"#,
        "vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="b"/><html url_name="c"/><html url_name="d"/></vertical>"#,
        "static/shared.png": "PNG shared image",
        "static/other.png": "PNG other image",
    ]
    for name in ["a", "b", "c", "d"] {
        files["html/\(name).xml"] = #"<html filename="\#(name)" display_name="Block \#(name)"/>"#
        let image = name == "d" ? "other.png" : "shared.png"
        files["html/\(name).html"] = #"<p>Block \#(name)</p><img src="/static/\#(image)">"#
    }
    try TestSupport.write(files, under: root)
    return root
}

/// Replaces `text` in the file at `path` with `replacement` of as many bytes and puts its mtime
/// back to `modified`: an edit that only its ctime shows. Returns the new bytes.
@discardableResult
func rewriteKeepingSizeAndTime(_ path: String, replacing text: String, with replacement: String, modified: Date) throws -> [UInt8] {
    let before = TestSupport.read(path)
    let same = Array(String(decoding: before, as: UTF8.self).replacingOccurrences(of: text, with: replacement).utf8)
    #expect(same.count == before.count && same != before)
    try TestSupport.writeBytes(same, to: path)
    try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)
    return same
}

func archiveBytes(_ out: String) throws -> [String: [UInt8]] {
    var result: [String: [UInt8]] = [:]
    for block in try manifest(in: out).blocks {
        if let archive = block.archive { result[block.usageID] = TestSupport.read(out + "/" + archive) }
    }
    return result
}

func id(_ name: String) -> String { "block-v1:O+N+r+type@html+block@\(name)" }

@Suite struct IncrementalBuildTests {
    @Test func aNoOpRebuildChangesNoByte() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let before = TestSupport.files(under: out).map { ($0, TestSupport.read(out + "/" + $0)) }
        let mtimes = try TestSupport.files(under: out).map { try FileManager.default.attributesOfItem(atPath: out + "/" + $0)[.modificationDate] as? Date }
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.counts.reused == 4 && report.counts.built == 0)
        let after = TestSupport.files(under: out).map { ($0, TestSupport.read(out + "/" + $0)) }
        #expect(before.map(\.0) == after.map(\.0))
        #expect(before.map(\.1) == after.map(\.1), "manifest and archives are byte-identical")
        let mtimesAfter = try TestSupport.files(under: out).map { try FileManager.default.attributesOfItem(atPath: out + "/" + $0)[.modificationDate] as? Date }
        #expect(mtimes == mtimesAfter, "nothing was rewritten")
    }

    /// A page depends on where its own links land, not on every block's: adding a block renders
    /// only that block, and removing one renders again only the page whose link led to it.
    @Test func addingOrRemovingABlockRendersOnlyThePagesWhoseLinksChange() throws {
        let course = try fourBlockCourse()
        try TestSupport.write(["html/a.html": #"<p>Block a</p><a href="/jump_to_id/b">to b</a> <a href="d">to d</a>"#], under: course)
        let (out, first) = try build(course)
        #expect(first.counts.rendered == 4)
        let page = "html/a/index.html"
        #expect(try pageText(page, in: out).contains("../../html/b/index.html"))

        try TestSupport.write([
            "html/e.xml": #"<html filename="e" display_name="Block e"/>"#, "html/e.html": "<p>Block e</p>",
            "vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="b"/><html url_name="c"/><html url_name="d"/><html url_name="e"/></vertical>"#,
        ], under: course)
        let (_, added) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(added.errors == [])
        #expect(added.counts.rendered == 1 && added.counts.built == 1 && added.counts.reused == 4)

        try TestSupport.write([
            "vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="c"/><html url_name="d"/><html url_name="e"/></vertical>"#,
        ], under: course)
        let (_, removed) = try build(course, into: out, publishedAt: "2026-12-02T00:00:00Z")
        #expect(removed.counts.rendered == 1, "only a, whose link led to b")
        #expect(removed.counts.built == 1 && removed.counts.removed == 1)
        let text = try pageText(page, in: out)
        #expect(!text.contains("html/b/index.html") && text.contains("#coursepack-online-only"))
        #expect(text.contains("../../html/d/index.html"))
        let (fresh, _) = try build(course)
        #expect(try archiveBytes(fresh) == archiveBytes(out))
    }

    @Test func changingOneHTMLFileChangesExactlyThatBlock() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let before = try archiveBytes(out)
        try TestSupport.write(["html/b.html": "<p>Block b, edited</p>"], under: course)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.counts.built == 1 && report.counts.reused == 3)
        let after = try archiveBytes(out)
        let changed = before.keys.filter { before[$0] != after[$0] }
        #expect(changed == [id("b")])
        let entries = try manifest(in: out).blocks
        #expect(entries.first { $0.usageID == id("b") }?.lastModified == "2026-12-01T00:00:00Z")
        #expect(entries.filter { $0.usageID != id("b") }.allSatisfy { $0.lastModified == "2026-11-22T10:00:00Z" })
        #expect(try manifest(in: out).publishedAt == "2026-12-01T00:00:00Z")
        try validateAgainstSchema(out + "/manifest.json")
    }

    @Test func renamingAnAssetUsedByThreeBlocksChangesExactlyThose() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let before = try archiveBytes(out)
        try FileManager.default.moveItem(atPath: course + "/static/shared.png", toPath: course + "/static/renamed.png")
        for name in ["a", "b", "c"] {
            try TestSupport.write(["html/\(name).html": #"<p>Block \#(name)</p><img src="/static/renamed.png">"#], under: course)
        }
        _ = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        let after = try archiveBytes(out)
        #expect(Set(before.keys.filter { before[$0] != after[$0] }) == [id("a"), id("b"), id("c")])
    }

    @Test func aRemovedBlockLosesItsArchiveAfterTheManifest() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        try TestSupport.write(["vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="b"/><html url_name="d"/></vertical>"#], under: course)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.counts.removed == 1)
        #expect(!FileManager.default.fileExists(atPath: out + "/html/c.zip"))
        #expect(try manifest(in: out).blocks.map(\.usageID) == [id("a"), id("b"), id("d")])
    }

    @Test func aBlockThatFailsKeepsItsPreviousArchiveAndEntry() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let previous = try manifest(in: out).blocks.first { $0.usageID == id("c") }
        let archive = TestSupport.read(out + "/html/c.zip")
        try TestSupport.write(["html/c.xml": "<html filename=\"c\" <<< broken"], under: course)
        try TestSupport.write(["html/a.html": "<p>a changed too</p>"], under: course)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.counts.failed == 1)
        #expect(report.errors.first?.file == "html/c.xml")
        #expect(report.counts.built == 1, "the other change still lands")
        #expect(TestSupport.read(out + "/html/c.zip") == archive)
        #expect(try manifest(in: out).blocks.first { $0.usageID == id("c") } == previous)
    }

    /// An archive changed after the manifest that names it was written is hashed before it is
    /// reused; a damaged one is written again, and since its content did not change, its entry
    /// (sha256, last_modified) comes back exactly as it was.
    @Test func anArchiveDamagedInPlaceIsWrittenAgain() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let path = out + "/html/c.zip"
        let good = TestSupport.read(path)
        let entry = try manifest(in: out).blocks.first { $0.usageID == id("c") }
        var info = stat()
        stat(path, &info)
        var damaged = good
        damaged[damaged.count / 2] ^= 0xFF
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        var times = [info.st_atim, info.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0, "same size, same mtime: only the change time differs")
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.counts.built == 1 && report.counts.reused == 3)
        #expect(TestSupport.read(path).elementsEqual(good), "the archive is back, byte for byte")
        #expect(try manifest(in: out).blocks.first { $0.usageID == id("c") } == entry)
    }

    @Test func aManifestOfANewerSchemaOrCorruptIsRefusedAndKept() throws {
        let course = try fourBlockCourse()
        for text in [#"{"schema_version": 3, "blocks": []}"#, "{ not json"] {
            let out = TestSupport.temporaryFolder("out")
            try TestSupport.write(["manifest.json": text], under: out)
            #expect(throws: BuildError.self) { _ = try build(course, into: out) }
            #expect(String(decoding: TestSupport.read(out + "/manifest.json"), as: UTF8.self) == text)
            #expect(TestSupport.files(under: out).filter { !$0.hasPrefix(".") } == ["manifest.json"])
        }
    }

    /// The builder nests containers no deeper than a client takes an outline: one definition,
    /// held equal here (the builder's module does not see the client's).
    @Test func theBuilderNestsNoDeeperThanClientsTakeAnOutline() {
        #expect(CourseLoader.deepestNesting == OutlineEntry.maximumDepth)
    }

    /// An html file is not read again while its stamp is the one the last build recorded
    /// (`html-files.bin`); one rewritten with as many bytes and its mtime put back has another
    /// ctime, so it is read: the page shows the new text, a page that became style-only gives
    /// its unit's other pages its style, and the next build is unchanged.
    @Test func anHTMLFileEditedWithItsModificationTimePutBackReachesItsPage() throws {
        let course = try fourBlockCourse()
        let old = Date(timeIntervalSince1970: 1_600_000_000)
        let path = course + "/html/c.html"
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        #expect(FileManager.default.fileExists(atPath: BuildOptions.defaultStateFolder(forOutput: out) + "/html-files.bin"))
        let same = try rewriteKeepingSizeAndTime(path, replacing: "Block c", with: "Block Q", modified: old)
        let (_, rebuilt) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(rebuilt.counts.built == 1 && rebuilt.counts.reused == 3)
        let unzip = try #require(TestSupport.which("unzip"))
        #expect(try TestSupport.run(unzip, ["-p", out + "/html/c.zip", "index.html"]).stdout.contains("Block Q"))

        let style = Array("<style>p { color: teal; }</style>".utf8)
        try TestSupport.writeBytes(style + Array(repeating: UInt8(ascii: " "), count: max(0, same.count - style.count)), to: path)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        _ = try build(course, into: out, publishedAt: "2026-12-02T00:00:00Z", now: TestSupport.clockAhead)
        #expect(try TestSupport.run(unzip, ["-p", out + "/html/a.zip", "index.html"]).stdout.contains("color: teal"))
        let (_, again) = try build(course, into: out, publishedAt: "2026-12-03T00:00:00Z", now: TestSupport.clockAhead)
        #expect(again.inputsUnchanged)
        #expect(try PublishVerifier.verify(folder: out).problems.isEmpty)
    }

    /// Unchanged media is not read again: the hash cache answers for a file whose stamp (size,
    /// mtime, ctime, inode) is unchanged. An edit of the same size whose mtime was put back is
    /// still an edit (its ctime moved): the archive gets the new bytes, and the build state
    /// saved afterwards describes them, so the next build is unchanged with the new content.
    @Test func anEditWithItsModificationTimePutBackReachesTheArchive() throws {
        let course = try fourBlockCourse()
        let old = Date(timeIntervalSince1970: 1_600_000_000)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: course + "/static/other.png")
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        #expect(FileManager.default.fileExists(atPath: BuildOptions.defaultStateFolder(forOutput: out) + "/cache.json"))
        let (_, untouched) = try build(course, into: out, publishedAt: "2026-11-30T00:00:00Z", now: TestSupport.clockAhead)
        #expect(untouched.inputsUnchanged)
        // Same size, same mtime, other bytes.
        try TestSupport.write(["static/other.png": "PNG OTHER IMAGE"], under: course)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: course + "/static/other.png")
        let (_, rebuilt) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(!rebuilt.inputsUnchanged)
        #expect(rebuilt.counts.built == 1 && rebuilt.counts.reused == 3, "block d shows the edited image")
        let unzip = try #require(TestSupport.which("unzip"))
        #expect(try TestSupport.run(unzip, ["-p", out + "/html/d.zip", "static/other.png"]).stdout == "PNG OTHER IMAGE")
        let (_, again) = try build(course, into: out, publishedAt: "2026-12-02T00:00:00Z", now: TestSupport.clockAhead)
        #expect(again.inputsUnchanged, "the state saved after the rebuild describes the new bytes")
        #expect(try TestSupport.run(unzip, ["-p", out + "/html/d.zip", "static/other.png"]).stdout == "PNG OTHER IMAGE")
        #expect(try PublishVerifier.verify(folder: out).problems.isEmpty)
    }
}

/// A rebuild whose course, options, program and output are as the last clean build left them
/// stops before loading anything. Files changed within `TreeStamp.settleMargin` of a build are
/// never trusted this way, so these builds run on a clock a minute ahead (`TestSupport.clockAhead`).
@Suite struct UnchangedBuildTests {
    func settledCourse() throws -> String {
        let course = try fourBlockCourse()
        try TestSupport.write(["html/d.html": #"<p>Block d</p><img src="/static/other.png"><a href="/static/missing.pdf">notes</a>"#], under: course)
        return course
    }

    @Test func anUnchangedRebuildLoadsNothingAndReportsTheSameResult() throws {
        let course = try settledCourse()
        let (out, first) = try build(course, now: TestSupport.clockAhead)
        #expect(!first.inputsUnchanged)
        let files = TestSupport.files(under: out).map { ($0, TestSupport.read(out + "/" + $0)) }
        let (_, again) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(again.inputsUnchanged)
        let c = again.counts
        #expect(c.blocks == 4 && c.reused == 4 && c.built == 0 && c.removed == 0 && c.failed == 0 && c.offlineFalse == 0)
        #expect(again.warnings == first.warnings && again.warnings.count == 1, "the unresolved link is reported again")
        #expect(TestSupport.files(under: out).map { ($0, TestSupport.read(out + "/" + $0)) }.elementsEqual(files, by: ==))
        #expect(try manifest(in: out).publishedAt == "2026-11-22T10:00:00Z")
    }

    /// Per-block memos: an edit to one page renders that page alone, and what the others
    /// reported (their warnings) is reported again without rendering them.
    @Test func aOnePageEditRendersOnlyThatPage() throws {
        let course = try settledCourse()
        let (out, first) = try build(course, now: TestSupport.clockAhead)
        #expect(first.counts.rendered == 4)
        try TestSupport.write(["html/b.html": "<p>Block b, edited</p>"], under: course)
        let (_, edited) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(edited.counts.rendered == 1 && edited.counts.built == 1 && edited.counts.reused == 3)
        #expect(edited.warnings == first.warnings, "block d's unresolved link is reported though d was not rendered")
        let fresh = TestSupport.temporaryFolder("out")
        _ = try build(course, into: fresh, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(try archiveBytes(out) == archiveBytes(fresh), "the same archives as a build from scratch")
    }

    /// What every page shares (a static file, a display name other pages link by, a template
    /// setting) is an input of every page: a change to it renders them all again.
    @Test func aChangeToWhatPagesShareRendersThemAll() throws {
        let course = try settledCourse()
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        try TestSupport.write(["static/shared.png": "PNG shared image, new"], under: course)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(report.counts.rendered == 4, "every page is made again")
        #expect(report.counts.built == 3, "the three pages showing the image")
        let fresh = TestSupport.temporaryFolder("out")
        _ = try build(course, into: fresh, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(try archiveBytes(out) == archiveBytes(fresh))
    }

    @Test func anEditWhoseModificationTimeWasPutBackIsStillSeen() throws {
        let course = try settledCourse()
        let path = course + "/html/b.html"
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        var before = stat()
        stat(path, &before)
        // Same size, then the old mtime restored: only the change time tells.
        try TestSupport.write(["html/b.html": #"<p>Block B</p><img src="/static/shared.png">"#], under: course)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(!report.inputsUnchanged)
        #expect(report.counts.built == 1 && report.counts.reused == 3)
    }

    /// The publish hook builds a course the moment it is exported: every file is fresh. The
    /// build is recorded with their content hashes, so the next no-op stops early on the real
    /// clock; an edit of the same size with its mtime put back is still rebuilt.
    @Test func aBuildRightAfterExportLetsTheNextNoOpStopEarly() throws {
        let course = try fourBlockCourse()
        let (out, first) = try build(course)
        #expect(!first.inputsUnchanged && first.counts.built == 4)
        let archives = try archiveBytes(out)
        let (_, noOp) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(noOp.inputsUnchanged, "inputs written just before the first build")
        #expect(noOp.counts.reused == 4 && noOp.warnings == first.warnings)
        #expect(try archiveBytes(out) == archives)

        let path = course + "/html/b.html"
        var before = stat()
        stat(path, &before)
        try TestSupport.write(["html/b.html": #"<p>Block B</p><img src="/static/shared.png">"#], under: course)
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        let (_, edited) = try build(course, into: out, publishedAt: "2026-12-02T00:00:00Z")
        #expect(!edited.inputsUnchanged && edited.counts.built == 1 && edited.counts.reused == 3)
        let (_, again) = try build(course, into: out, publishedAt: "2026-12-03T00:00:00Z")
        #expect(again.inputsUnchanged, "the edited file, fresh, is trusted by its hash")
        #expect(try PublishVerifier.verify(folder: out).problems.isEmpty)
    }

    /// A fresh file too large to hash is not hashed after the build, nor again before the next:
    /// the record does not vouch for the inputs, and the next build reuses every block instead.
    /// A fresh 20 GB file linked from nothing once added 30 s to a build and 10 s to the next.
    @Test func aFreshFileTooLargeToHashLeavesTheNextBuildIncrementalNotANoOp() throws {
        let course = try fourBlockCourse()
        let junk = course + "/junk.bin"
        #expect(FileManager.default.createFile(atPath: junk, contents: nil))
        #expect(truncate(junk, off_t(IncrementalBuild.largestHashedFreshFile) + 1) == 0)
        let (out, first) = try build(course)
        #expect(first.counts.built == 4)
        let (_, next) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(!next.inputsUnchanged, "nothing vouches for the fresh file")
        #expect(next.counts.reused == 4 && next.counts.rendered == 0)
    }

    /// Static files just exported are too fresh for their stamps: what every page shares is
    /// digested by their content, so an edit right after the export still renders one page.
    @Test func anEditRightAfterExportRendersOnlyThatPage() throws {
        let course = try settledCourse()
        let (out, first) = try build(course)
        #expect(first.counts.rendered == 4)
        try TestSupport.write(["html/b.html": "<p>Block b, edited</p>"], under: course)
        let (_, edited) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(edited.counts.rendered == 1 && edited.counts.built == 1 && edited.counts.reused == 3)
        try TestSupport.write(["static/shared.png": "PNG shared image, new"], under: course)
        let (_, shared) = try build(course, into: out, publishedAt: "2026-12-02T00:00:00Z")
        #expect(shared.counts.rendered == 4, "a static file's new content reaches every page")
        let fresh = TestSupport.temporaryFolder("out")
        _ = try build(course, into: fresh, publishedAt: "2026-12-02T00:00:00Z")
        #expect(try archiveBytes(out) == archiveBytes(fresh))
    }

    /// An online-only block (a discussion) has no archive but is remembered like the others:
    /// an edit elsewhere does not render it again, and its manifest entry stays as it was.
    @Test func anOnlineOnlyBlockIsNotRenderedAgainForAnEditElsewhere() throws {
        let course = try settledCourse()
        try TestSupport.write([
            "vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="b"/><html url_name="c"/><html url_name="d"/><discussion url_name="talk" display_name="Talk" discussion_id="t"/></vertical>"#,
        ], under: course)
        let (out, first) = try build(course, now: TestSupport.clockAhead)
        #expect(first.counts.rendered == 5 && first.counts.offlineFalse == 1)
        try TestSupport.write(["html/b.html": "<p>Block b, edited</p>"], under: course)
        let (_, edited) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(edited.counts.rendered == 1 && edited.counts.offlineFalse == 1 && edited.counts.blocks == 5)
        let fresh = TestSupport.temporaryFolder("out")
        _ = try build(course, into: fresh, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        let online = { (folder: String) in try manifest(in: folder).blocks.filter { $0.offline == false } }
        #expect(try online(out).count == 1)
        #expect(try online(out) == online(fresh), "the same entry as a build from scratch")
    }

    @Test func aChangedOutputOrOptionMeansAFullBuild() throws {
        let course = try settledCourse()
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        try FileManager.default.removeItem(atPath: out + "/html/c.zip")
        let (_, repaired) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(!repaired.inputsUnchanged && repaired.counts.built == 1)
        #expect(try TestSupport.independentZipCheck([out + "/html/c.zip"]).isEmpty)
        #expect(try build(course, into: out, now: TestSupport.clockAhead).1.inputsUnchanged)

        let withLMS = try CoursePackager(options: BuildOptions(
            outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 2, lmsURL: "https://lms.example.com")).build(coursePath: course)
        #expect(!withLMS.inputsUnchanged)
    }

    @Test func aNewFileInTheCourseMeansAFullBuild() throws {
        let course = try settledCourse()
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        try TestSupport.write(["static/missing.pdf": "%PDF-1.4 notes"], under: course)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(!report.inputsUnchanged)
        #expect(report.warnings.isEmpty && report.counts.built == 1, "the link now resolves and block d is rebuilt")
    }
}

/// The text of one file of a block's archive, `<type>/<name>/<file>`.
func pageText(_ path: String, in out: String) throws -> String {
    let parts = path.split(separator: "/", maxSplits: 2).map(String.init)
    let reader = try ZipReader(path: out + "/" + parts[0] + "/" + parts[1] + ".zip")
    return String(decoding: try reader.contents(of: parts[2]), as: UTF8.self)
}
