import Foundation
import Manifest
import Testing
import TestSupport

/// The builder and the client agree on what a publish may hold (issue 29, findings 10 and 11):
/// one definition of the limits (`ArchiveLimits`) and of entry names (`EntryName`), so a build
/// never publishes a block every client refuses, and names that break line-based state are
/// refused on both sides.
@Suite(.serialized) struct SharedLimitsTests {
    /// `coursepack` with `COURSEPACK_LOWER_LIMITS` set (the hook that lowers the shared limits
    /// for builder and client alike).
    static func coursepack(_ arguments: [String], lowering limits: String) throws -> TestSupport.ProcessResult {
        try TestSupport.run("/usr/bin/env", ["COURSEPACK_LOWER_LIMITS=\(limits)", TestSupport.coursepackBinary] + arguments)
    }

    /// A course whose block `data` links the static files `files` (name → size of zeros, made
    /// sparse with truncate so that gigabytes cost nothing); into `course` when given.
    @discardableResult
    static func courseLinking(_ files: [String: UInt64], into course: String? = nil) throws -> String {
        let links = files.keys.sorted().map { "<a href=\"/static/\($0)\">\($0)</a>" }.joined()
        let page = ["html/data.xml": #"<html filename="data"/>"#, "html/data.html": "<p>\(links)</p>"]
        let root: String
        if let course {
            try TestSupport.write(page, under: course)
            root = course
        } else {
            root = try hostileCourse(#"<html url_name="data"/>"#, page)
        }
        for (name, size) in files {
            let path = root + "/static/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, off_t(size)) == 0)
        }
        return root
    }

    static let dataBlock = "block-v1:O+N+r+type@html+block@data"

    /// Entries and their total size in an archive, read by Python's zipfile.
    static func contents(of archive: String) throws -> (entries: Int, total: UInt64) {
        let python = try #require(TestSupport.which("python3"))
        let script = "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(len(z.infolist()), sum(i.file_size for i in z.infolist()))"
        let fields = try TestSupport.run(python, ["-c", script, archive]).stdout.split(separator: " ").map { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 }
        return (Int(fields.first ?? 0), fields.last ?? 0)
    }

    /// Builds with `initial`, then with `files`, under the limits `lowering` gives for the
    /// first archive's contents: the block fails, naming itself, the file and the client's
    /// refusal; the previous archive and manifest entry stay, and what was published syncs.
    func expectRefused(
        _ files: [String: UInt64], initial: [String: UInt64]? = nil, mentioning: [String],
        lowering: ((entries: Int, total: UInt64)) -> String = { _ in "" }
    ) throws {
        let course = try Self.courseLinking(initial ?? Dictionary(uniqueKeysWithValues: files.keys.map { ($0, 10) }))
        let out = TestSupport.temporaryFolder("limits") + "/out"
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "-q"]).status == 0)
        let limits = lowering(try Self.contents(of: out + "/html/data.zip"))
        #expect(try Self.coursepack(["build", course, "--out", out, "-q"], lowering: limits).status == 0, "the first archive is within \(limits)")
        let before = try #require(try ManifestFile.read(out + "/manifest.json")).blocks.first { $0.usageID == Self.dataBlock }
        let archive = TestSupport.read(out + "/html/data.zip")
        try Self.courseLinking(files, into: course)
        let built = try Self.coursepack(["build", course, "--out", out], lowering: limits)
        #expect(built.status == 1, "\(built.stderr)")
        for fragment in [Self.dataBlock, "a client would refuse this archive"] + mentioning {
            #expect(built.stderr.contains(fragment), "\(fragment) in \(built.stderr)")
        }
        #expect(try #require(try ManifestFile.read(out + "/manifest.json")).blocks.first { $0.usageID == Self.dataBlock } == before)
        // A Bool: a failed comparison of two archives' bytes would print megabytes.
        let kept = TestSupport.read(out + "/html/data.zip") == archive
        #expect(kept, "the previous archive is kept")
        #expect(try TestSupport.coursepack(["verify", out]).status == 0)
        let target = TestSupport.temporaryFolder("limits") + "/device"
        let sync = try Self.coursepack(["sync", out, "--to", target], lowering: limits)
        #expect(sync.status == 0, "the client accepts all that was published: \(sync.stderr)")
    }

    /// Limits lowered under an unchanged course: the archive the old limits let through is not
    /// kept in silence because its content is the same. Its block is refused as a new archive
    /// past the limits would be (CP314, exit 1), the last publish is kept, and the build says so.
    @Test func anArchiveFromBeforeTheLimitsWereLoweredIsCheckedAgain() throws {
        let course = try Self.courseLinking(["a.txt": 10, "b.txt": 10, "c.txt": 10])
        let out = TestSupport.temporaryFolder("limits") + "/out"
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "-q"]).status == 0)
        let entries = try Self.contents(of: out + "/html/data.zip").entries
        #expect(entries >= 4, "index.html and the three files: \(entries)")
        let built = try Self.coursepack(["build", course, "--out", out], lowering: "entries=\(entries - 1)")
        #expect(built.status == 1, "\(built.stderr)")
        for fragment in ["CP314", Self.dataBlock, "\(entries) entries (limit \(entries - 1))", "a client would refuse this archive"] {
            #expect(built.stderr.contains(fragment), "\(fragment) in \(built.stderr)")
        }
        let again = try Self.coursepack(["build", course, "--out", out], lowering: "entries=\(entries)")
        #expect(again.status == 0, "at the archive's own count it is taken again: \(again.stderr)")
    }

    /// The plain attack: 2 GB of zeros deflate 1000:1, past the client's ratio.
    @Test func aTwoGigabyteCompressibleFileIsRefusedByTheBuilderAsTheClientWouldRefuseIt() throws {
        try expectRefused(["zeros.log": 2 << 30], mentioning: ["static/zeros.log", "zip bomb"])
    }

    /// Just past the ratio, small: 600 KB of zeros (the allowance covers short pages only).
    @Test func aSmallEntryJustPastTheRatioIsRefused() throws {
        try expectRefused(["zeros.txt": 600 << 10], mentioning: ["static/zeros.txt", "zip bomb"])
    }

    /// Many entries each within the ratio (thanks to the allowance), a bomb together.
    @Test func manyEntriesEachWithinTheRatioButABombTogetherAreRefused() throws {
        let files = Dictionary(uniqueKeysWithValues: (0..<60).map { ("part\($0).txt", UInt64(60 << 10)) })
        try expectRefused(files, mentioning: ["entries claim"])
    }

    /// Lowered limits, the same for both sides: one entry more than the client takes, and a
    /// total one byte over.
    @Test func oneEntryOrOneByteMoreThanTheClientTakesIsRefused() throws {
        try expectRefused(["f0.bin": 100, "f1.bin": 100], initial: ["f0.bin": 100], mentioning: ["entries"]) { "entries=\($0.entries)" }
        try expectRefused(["f0.bin": 10 + 1001], mentioning: ["entries total more than"]) { "total=\($0.total + 1000)" }
    }

    /// A manifest one byte over what clients take is not written (only the split form is);
    /// exactly at it, it is, and the client (with the same limit) takes it.
    @Test func aManifestLargerThanClientsTakeIsNotWritten() throws {
        let course = try hostileCourse("")
        let out = TestSupport.temporaryFolder("limits") + "/out"
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "-q"]).status == 0)
        let size = TestSupport.read(out + "/manifest.json").count
        let target = TestSupport.temporaryFolder("limits") + "/device"
        // As an older publish (no split form), so that the client reads manifest.json.
        let older = TestSupport.temporaryFolder("limits") + "/older"
        try TestSupport.copy(out, to: older)
        try TestSupport.removeSplitManifest(older)
        let refused = try Self.coursepack(["sync", older, "--to", target], lowering: "manifest=\(size - 1)")
        #expect(refused.status == 2 && refused.stderr.contains("manifest larger than \(size - 1) bytes"), "\(refused.stderr)")
        #expect(try Self.coursepack(["sync", older, "--to", target], lowering: "manifest=\(size)").status == 0)

        // One more block: a manifest.json larger than clients take is not written (the stale
        // one is removed), with a warning; the split manifest is the publish, and a rebuild
        // reads it as the previous one.
        try TestSupport.write(["vertical/v.xml": #"<vertical><html url_name="good"/><html url_name="more"/></vertical>"#,
                               "html/more.xml": #"<html filename="good"/>"#], under: course)
        let over = try Self.coursepack(["build", course, "--out", out], lowering: "manifest=\(size)")
        #expect(over.status == 0, "\(over.stderr)")
        #expect(over.stderr.contains("warning[CP331]") && over.stderr.contains("more than the \(size) a client accepts"), "\(over.stderr)")
        #expect(over.stderr.contains("manifest-index.json"), "\(over.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"), "the stale manifest.json is removed")
        #expect(FileManager.default.fileExists(atPath: out + "/manifest-index.json"))
        let verified = try Self.coursepack(["verify", out], lowering: "manifest=\(size)")
        #expect(verified.status == 0 && verified.stdout.contains(", 0 problems"), "\(verified.stdout)\(verified.stderr)")
        let again = try Self.coursepack(["build", course, "--out", out], lowering: "manifest=\(size)")
        #expect(again.status == 0 && again.stdout.contains(" 0 built"), "\(again.stdout)\(again.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"))
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "-q"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: out + "/manifest.json"), "written again once it fits")
    }

    /// A part or an index larger than clients take, or parts adding up to more than the split
    /// limit: every client would refuse the publish, so the build fails and publishes nothing;
    /// the publish in place stays as it was, and clients keep syncing it.
    @Test func aSplitManifestClientsWouldRefuseIsNotPublished() throws {
        let course = try hostileCourse("")
        let out = TestSupport.temporaryFolder("limits") + "/out"
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "-q"]).status == 0)
        let before = TestSupport.files(under: out).map { ($0, TestSupport.read(out + "/" + $0)) }
        try TestSupport.write(["html/good.html": "<p>An edit that a build must not publish.</p>"], under: course)
        let tiny = try Self.coursepack(["build", course, "--out", out], lowering: "manifest=64,split=64")
        #expect(tiny.status == 2, "\(tiny.stdout)\(tiny.stderr)")
        #expect(tiny.stderr.contains("error[CP332]") && tiny.stderr.contains(out + "/manifest-index.json"), "\(tiny.stderr)")
        #expect(tiny.stderr.contains("the parts would add up to") && tiny.stderr.contains("the publish in place stays"), "\(tiny.stderr)")
        for (path, bytes) in before where path.hasPrefix("manifest") || path.hasSuffix(".zip") {
            #expect(TestSupport.read(out + "/" + path) == bytes, "\(path) is as the last publish left it")
        }
        #expect(try TestSupport.coursepack(["verify", out]).status == 0)
        let target = TestSupport.temporaryFolder("limits") + "/device"
        #expect(try TestSupport.coursepack(["sync", out, "--to", target]).status == 0, "clients still take the publish in place")
        // A folder that holds such a publish anyway (an older builder made it) fails `verify`
        // with the clients' limits, as each client would refuse it.
        let refused = try Self.coursepack(["verify", out], lowering: "manifest=64,split=64")
        #expect(refused.status == 1 && refused.stderr.contains("more than the 64 a client accepts"), "\(refused.stdout)\(refused.stderr)")
        // Nor does `publish` put such a folder in place of one clients take.
        let root = TestSupport.temporaryFolder("limits") + "/webroot"
        #expect(try TestSupport.coursepack(["publish", out, "--to", root]).status == 0)
        let served = TestSupport.files(under: root).map { ($0, TestSupport.read(root + "/" + $0)) }
        let publish = try Self.coursepack(["publish", out, "--to", root], lowering: "manifest=64,split=64")
        #expect(publish.status == 2, "\(publish.stdout)\(publish.stderr)")
        #expect(publish.stderr.contains("every client would refuse this publish") && publish.stderr.contains("manifest-index.json"), "\(publish.stderr)")
        #expect(TestSupport.files(under: root).map { ($0, TestSupport.read(root + "/" + $0)) }.elementsEqual(served) { $0 == $1 }, "the target is as it was")
    }

    /// Containers nest no deeper than a client takes an outline: a chain of 40 units, each
    /// pointing to the next, is cut at the clients' depth with an error naming where, and the
    /// rest of the course is published and synced. Built 64 levels deep, it built cleanly and
    /// every client refused the whole course.
    @Test func nestingIsCutWhereClientsStopTakingTheOutline() throws {
        let course = try hostileCourse("", ["html/deep.xml": #"<html filename="deep"/>"#, "html/deep.html": "<p>deep</p>"])
        var files = ["vertical/v.xml": #"<vertical><html url_name="good"/><vertical url_name="d1"/></vertical>"#]
        for level in 1..<40 { files["vertical/d\(level).xml"] = #"<vertical><vertical url_name="d\#(level + 1)"/></vertical>"# }
        files["vertical/d40.xml"] = #"<vertical><html url_name="deep"/></vertical>"#
        try TestSupport.write(files, under: course)
        let out = TestSupport.temporaryFolder("limits") + "/out"
        let built = try TestSupport.coursepack(["build", course, "--out", out])
        #expect(built.status == 1 && built.stderr.contains("error[CP113]"), "\(built.stderr)")
        #expect(built.stderr.contains("deeper than \(OutlineEntry.maximumDepth) levels"), "\(built.stderr)")
        let target = TestSupport.temporaryFolder("limits") + "/device"
        let synced = try TestSupport.coursepack(["sync", out, "--to", target])
        #expect(synced.status == 0, "\(synced.stdout)\(synced.stderr)")
    }

    /// Finding 11's plain attack and its variants: archives whose entry names hold a newline,
    /// tab, CR, DEL, a C1 control or ESC are refused by the client (the block fails, the
    /// others install and verify), and the builder refuses such a static file.
    @Test(arguments: ["a\nb.html", "a\tb.html", "a\rb.html", "a\u{7F}b.html", "a\u{85}b.html", "static/\u{1B}[2Jx.css"])
    func namesWithControlCharactersAreRefusedOnBothSides(name: String) throws {
        let published = try ClientTargetTests.publish(TestSupport.exampleCourse)
        try withoutCourseFiles(published)
        let python = try #require(TestSupport.which("python3"))
        let script = """
            import hashlib, json, sys, zipfile
            out, name = sys.argv[1], sys.argv[2]
            path = out + "/html/welcome_page.zip"
            with zipfile.ZipFile(path, "a") as z:
                z.writestr(name, "<p>planted</p>")
            data = open(path, "rb").read()
            m = json.load(open(out + "/manifest.json"))
            for b in m["blocks"]:
                if b.get("archive") == "html/welcome_page.zip":
                    b["sha256"] = hashlib.sha256(data).hexdigest(); b["size"] = len(data)
                    b["offline_download"]["file_size"] = len(data)
            json.dump(m, open(out + "/manifest.json", "w"))
            """
        let planted = try TestSupport.run(python, ["-c", script, published, name])
        #expect(planted.status == 0, "\(planted.stderr)")
        let target = TestSupport.temporaryFolder("names") + "/device"
        let sync = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(sync.status == 1, "\(sync.stdout) \(sync.stderr)")
        #expect(sync.stderr.contains("html/welcome_page.zip") && sync.stderr.contains("control character"), "\(sync.stderr)")
        #expect(!sync.stderr.contains("\u{1B}"), "no terminal escape reaches the terminal")
        #expect(!FileManager.default.fileExists(atPath: target + exampleFolder + "/html/welcome_page"))
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/html/handout_page/index.html"))
        let verify = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!verify.stdout.contains("damaged:"), "\(verify.stdout)")

        // The builder: a static file of that name, linked from a page, fails its block.
        let file = name.hasPrefix("static/") ? String(name.dropFirst(7)) : name
        let course = try hostileCourse(
            #"<html url_name="named"/>"#,
            ["html/named.xml": #"<html filename="named"/>"#,
             "html/named.html": "<a href=\"/static/\(file.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")\">x</a>",
             "static/" + file: "data"])
        let out = TestSupport.temporaryFolder("names") + "/out"
        let built = try TestSupport.coursepack(["build", course, "--out", out])
        #expect(built.stderr.contains("control character"), "\(built.stderr)")
        #expect(!built.stderr.contains("\u{1B}"), "no terminal escape reaches the terminal")
        let manifest = try #require(try ManifestFile.read(out + "/manifest.json"))
        #expect(manifest.blocks.contains { $0.usageID.hasSuffix("block@good") && $0.archive != nil })
    }
}
