import BlockRenderer
import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// Every file a manifest names (any string ending in `.zip`, so a shared runtime archive
/// listed apart from the blocks counts too, every course file `files/<hh>/<sha256>[.gz]`
/// with its `files/<hh>` folder, and the split manifest: `manifest-index.json` and the parts
/// `manifest/<sha256>.json` it names), and the folders that hold them.
func namedByManifest(_ out: String) throws -> (files: Set<String>, topLevel: Set<String>) {
    let script = """
        import json, sys
        def walk(value):
            if isinstance(value, dict):
                for v in value.values(): yield from walk(v)
            elif isinstance(value, list):
                for v in value: yield from walk(v)
            elif isinstance(value, str) and value.endswith(".zip"):
                yield value
        m = json.load(open(sys.argv[1]))
        named = set(walk(m))
        for sha, f in m.get("files", {}).items():
            named.add("files/" + sha[:2])
            named.add("files/" + sha[:2] + "/" + sha + (".gz" if f.get("encoding") == "gzip" else ""))
        index = json.load(open(sys.argv[2]))
        for part in index["parts"]:
            named.add("manifest/" + part["sha256"] + ".json")
        print("\\n".join(sorted(named)))
        """
    let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, out + "/manifest.json", out + "/manifest-index.json"])
    #expect(result.status == 0, "\(result.stderr)")
    let files = Set(result.stdout.split(separator: "\n").map(String.init))
    return (files, Set(["manifest.json", "manifest-index.json"] + files.compactMap { $0.split(separator: "/").first.map(String.init) }))
}

/// Every entry under `root`, folders included, relative, dotfiles included.
func everyEntry(under root: String) -> [String] {
    var result: [String] = []
    let enumerator = FileManager.default.enumerator(atPath: root)
    while let path = enumerator?.nextObject() as? String { result.append(path) }
    return result.sorted()
}

/// `DIR` holds what clients download and nothing else: no state, cache or lock, no empty folders.
@Suite(.serialized) struct PublishedFolderTests {
    @Test func theDemoCoursesFolderHoldsOnlyTheManifestAndTheArchivesItNames() throws {
        let (out, _) = try build(TestSupport.demoCourse)
        let named = try namedByManifest(out)
        #expect(named.files.count > 250)
        let top = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(top == named.topLevel.sorted(), "ls -A DIR")
        let files = Set(everyEntry(under: out).filter { !top.contains($0) })
        #expect(files == named.files, "nothing but the archives the manifest names: \(files.symmetricDifference(named.files).sorted().prefix(5))")
        let state = BuildOptions.defaultStateFolder(forOutput: out)
        #expect(try FileManager.default.contentsOfDirectory(atPath: state).sorted() == ["block-files.bin", "blocks.bin", "cache.json", "html-files.bin", "page-facts.bin", "record.bin", "search-chunks.bin", "search-parts.bin"])
    }

    /// A type whose blocks are all online-only (or whose last archive was removed) leaves no
    /// empty folder behind.
    @Test func noEmptyFolderIsLeftForTypesWithoutArchives() throws {
        let course = try fourBlockCourse()
        try TestSupport.write([
            "vertical/v.xml": #"<vertical><html url_name="a"/><html url_name="b"/><html url_name="c"/><html url_name="d"/><lti url_name="tool" display_name="Tool"/><discussion url_name="talk" display_name="Talk"/></vertical>"#,
        ], under: course)
        let (out, report) = try build(course)
        #expect(report.counts.offlineFalse == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["files", "html", "manifest", "manifest-index.json", "manifest.json", "search"])
        try TestSupport.write(["vertical/v.xml": #"<vertical><lti url_name="tool" display_name="Tool"/></vertical>"#], under: course)
        let (_, second) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(second.counts.removed == 4)
        // The online-only block is still found by its name.
        // The search index's content stays under files/; the blocks' contents went with them.
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["files", "manifest", "manifest-index.json", "manifest.json", "search"])
        // index.js and its one part: their prefix folders, and no other.
        let search = try #require(try ManifestFile.read(out + "/manifest.json")?.search?.files)
        #expect(search.count == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out + "/files").sorted() == Set(search.values.map { String($0.prefix(2)) }).sorted())
    }

    /// Two builds of one course into two folders are the same bytes, every file, dotfiles
    /// included (`diff -r`): nothing in them depends on the folder, the time or the machine.
    @Test func twoBuildsIntoTwoFoldersAreIdenticalWithDiff() throws {
        let (first, _) = try build(TestSupport.demoCourse, jobs: 1)
        let (second, _) = try build(TestSupport.demoCourse, jobs: 2)
        let diff = try TestSupport.run(try #require(TestSupport.which("diff")), ["-r", first, second])
        #expect(diff.status == 0, "\(diff.stdout.prefix(2000))")
        #expect(everyEntry(under: first) == everyEntry(under: second))
    }

    /// Files an older coursepack kept inside `DIR` go on the next build, also one that would
    /// otherwise find nothing to do.
    @Test func filesOfAnOlderVersionAreRemovedFromTheFolder() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        let legacy = [".coursepack-cache.json", ".coursepack-state.json", ".coursepack.lock"]
        for name in legacy { try TestSupport.write([name: "{}"], under: out) }
        let (_, report) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(!report.inputsUnchanged, "the old files change the output's stamp")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["files", "html", "manifest", "manifest-index.json", "manifest.json", "search"])
        #expect(try build(course, into: out, now: TestSupport.clockAhead).1.inputsUnchanged)
    }

    @Test func aStateFolderInsideTheOutputIsRefusedAndOneElsewhereIsUsed() throws {
        let course = try fourBlockCourse()
        let out = TestSupport.temporaryFolder("out")
        let inside = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 1, stateFolder: out + "/state")
        #expect(throws: BuildError.self) { _ = try CoursePackager(options: inside).build(coursePath: course) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == [], "nothing was left in DIR")

        let elsewhere = TestSupport.temporaryFolder("state") + "/nested/state"
        let options = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 1, stateFolder: elsewhere)
        _ = try CoursePackager(options: options).build(coursePath: course)
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/cache.json"))
        #expect(!FileManager.default.fileExists(atPath: BuildOptions.defaultStateFolder(forOutput: out)))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["files", "html", "manifest", "manifest-index.json", "manifest.json", "search"])
    }

    /// A new coursepack version changes no page: every archive and content hash stays, and a
    /// rebuild with the new version downloads nothing new to clients.
    @Test func anotherGeneratorChangesNoArchiveAndNoContentHash() throws {
        let course = TestSupport.exampleCourse
        func build(_ generator: String, into out: String, at time: String = "2026-11-22T10:00:00Z") throws -> BuildReport {
            try CoursePackager(options: BuildOptions(outputFolder: out, publishedAt: time, jobs: 2, generator: generator)).build(coursePath: course)
        }
        let old = TestSupport.temporaryFolder("out")
        let new = TestSupport.temporaryFolder("out")
        _ = try build("coursepack 0.1.0", into: old)
        _ = try build("coursepack 9.9.9", into: new)
        let before = try manifest(in: old)
        let after = try manifest(in: new)
        #expect(after.generator == "coursepack 9.9.9")
        #expect(before.blocks.map(\.contentHash) == after.blocks.map(\.contentHash))
        #expect(before.blocks.map(\.sha256) == after.blocks.map(\.sha256))
        #expect(before.blocks.map(\.lastModified) == after.blocks.map(\.lastModified))
        let diff = try TestSupport.run(try #require(TestSupport.which("diff")), ["-r", "-x", "manifest.json", "-x", "manifest-index.json", old, new])
        #expect(diff.status == 0, "\(diff.stdout.prefix(2000))")

        let upgraded = try build("coursepack 9.9.9", into: old, at: "2026-12-01T00:00:00Z")
        #expect(upgraded.counts.built == 0 && upgraded.counts.reused == before.blocks.filter { $0.archive != nil }.count)
        #expect(try manifest(in: old).blocks.map(\.lastModified) == before.blocks.map(\.lastModified), "clients fetch nothing again")
    }
}

/// The library refuses what the command line refuses, so a caller cannot build with values no
/// build can use or write a manifest date no client reads.
@Suite struct BuildOptionsTests {
    @Test func publishTimesAreReadAsISO8601AndWrittenAsTheManifestWritesThem() throws {
        let options = try BuildOptions(outputFolder: "/tmp/x", publishedAt: "2026-11-22T12:00:00.750+02:00", jobs: 1)
        #expect(options.publishedAt.text == "2026-11-22T10:00:00Z")
        #expect(try PublishTime(parsing: "2026-11-22T10:00:00Z").text == "2026-11-22T10:00:00Z")
    }

    @Test(arguments: ["yesterday", "2026-11-22", "2026-13-01T00:00:00Z", "", "2026-11-22 10:00:00"])
    func aTimeThatIsNotISO8601IsRefused(text: String) {
        #expect(throws: BuildError.self) { try BuildOptions(outputFolder: "/tmp/x", publishedAt: text, jobs: 1) }
    }

    @Test func jobsLevelsAndTimeoutsOutOfRangeAreRefused() {
        let time = "2026-11-22T10:00:00Z"
        #expect(throws: BuildError.self) { try BuildOptions(outputFolder: "/tmp/x", publishedAt: time, jobs: 0) }
        #expect(throws: BuildError.self) { try BuildOptions(outputFolder: "/tmp/x", publishedAt: time, jobs: 1, compressionLevel: 0) }
        #expect(throws: BuildError.self) { try BuildOptions(outputFolder: "/tmp/x", publishedAt: time, jobs: 1, compressionLevel: 10) }
        #expect(throws: BuildError.self) { try BuildOptions(outputFolder: "/tmp/x", publishedAt: time, jobs: 1, lockTimeout: -1) }
        #expect(throws: BuildError.self) { try BuildOptions(outputFolder: "/tmp/x", publishedAt: time, jobs: 1, lockTimeout: .infinity) }
        #expect(throws: BuildError.self) { try BuildOptions(outputFolder: "", publishedAt: time, jobs: 1) }
        #expect((try? BuildOptions(outputFolder: "/tmp/x", publishedAt: time, jobs: 3, compressionLevel: 9, lockTimeout: 0)) != nil)
    }
}
