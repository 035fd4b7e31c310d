import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// Builds a course into a fresh folder and returns the folder and the report. `now` is the
/// build's clock (`TestSupport.clockAhead` counts files just written as settled).
func build(
    _ course: String, into out: String? = nil, jobs: Int = 2, publishedAt: String = "2026-11-22T10:00:00Z",
    now: (@Sendable () -> Int64)? = nil
) throws -> (String, BuildReport) {
    let folder = out ?? TestSupport.temporaryFolder("out")
    var options = try BuildOptions(outputFolder: folder, publishedAt: publishedAt, jobs: jobs)
    if let now { options.now = now }
    let report = try CoursePackager(options: options).build(coursePath: course)
    return (folder, report)
}

/// The manifest a test build produced, checked against schema/manifest.schema.json first.
func manifest(in folder: String) throws -> CourseManifest {
    try validateAgainstSchema(folder + "/manifest.json")
    return try #require(try ManifestFile.read(folder + "/manifest.json"))
}

/// Validates a manifest against schema/manifest.schema.json with Python's jsonschema.
func validateAgainstSchema(_ manifestPath: String) throws {
    let python = try #require(TestSupport.which("python3"))
    let script = """
        import json, sys
        import jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(json.load(open(sys.argv[2])), schema, cls=jsonschema.Draft202012Validator)
        """
    let result = try TestSupport.run(python, ["-c", script, TestSupport.packageRoot + "/schema/manifest.schema.json", manifestPath])
    #expect(result.status == 0, "manifest does not match its schema: \(result.stderr)")
}

@Suite(.serialized) struct DemoCourseTests {
    static let demo = TestSupport.demoCourse

    @Test func everyPublishedBlockIsArchivedOrListedOnlineOnly() throws {
        #expect(FileManager.default.fileExists(atPath: Self.demo + "/course.xml"), "the demo course corpus is missing: \(Self.demo)")
        let (out, report) = try build(Self.demo)
        let blocks = try manifest(in: out).blocks
        #expect(report.errors == [])
        #expect(blocks.filter { $0.type == "html" && $0.archive != nil }.count == 266)
        let problems = blocks.filter { $0.type == "problem" }
        #expect(problems.count == 29)
        #expect(problems.allSatisfy { $0.archive != nil || ($0.offline == false && !($0.reason ?? "").isEmpty) })
        #expect(blocks.allSatisfy { $0.archive != nil || ($0.offline == false && $0.reason != nil) })

        let archives = blocks.compactMap(\.archive).map { out + "/" + $0 }
        #expect(Set(archives).count == archives.count, "archive paths are unique")
        #expect(try TestSupport.independentZipCheck(archives) == [])
        try validateAgainstSchema(out + "/manifest.json")
    }

    /// The report's phases are laps of one clock: together they are the packaging time, so an
    /// operator can tell which phase a slow build spent it in.
    @Test func theReportedPhasesAddUpToThePackagingTime() throws {
        let (_, report) = try build(Self.demo)
        let d = report.durations
        let phases = [d.previousSeconds, d.planSeconds, d.blocksSeconds, d.manifestSeconds, d.finishSeconds]
        #expect(phases.allSatisfy { $0 >= 0 })
        #expect(d.blocksSeconds > 0 && d.manifestSeconds > 0)
        #expect(d.searchSeconds <= d.manifestSeconds)
        #expect(abs(phases.reduce(0, +) - d.packageSeconds) < 0.05, "\(phases) against \(d.packageSeconds)")
    }

    @Test func manifestFieldsDescribeTheArchives() throws {
        let (out, _) = try build(Self.demo)
        let python = try #require(TestSupport.which("python3"))
        let script = """
            import hashlib, json, os, sys
            out = sys.argv[1]
            m = json.load(open(os.path.join(out, "manifest.json")))
            assert m["schema_version"] == 2 and m["course_id"] == "course-v1:OpenedX+DemoX+DemoCourse"
            assert m["published_at"] == "2026-11-22T10:00:00Z" and m["generator"].startswith("coursepack ")
            bad = []
            for b in m["blocks"]:
                if "archive" not in b: continue
                data = open(os.path.join(out, b["archive"]), "rb").read()
                if len(data) != b["size"]: bad.append(("size", b["usage_id"]))
                if hashlib.sha256(data).hexdigest() != b["sha256"]: bad.append(("sha256", b["usage_id"]))
                if b["offline_download"] != {"file_url": b["archive"], "last_modified": b["last_modified"], "file_size": b["size"]}:
                    bad.append(("offline_download", b["usage_id"]))
                if len(b["content_hash"]) != 64 or b["last_modified"] != m["published_at"]: bad.append(("hash", b["usage_id"]))
                if not b["usage_id"].startswith("block-v1:OpenedX+DemoX+DemoCourse+type@" + b["type"] + "+block@"): bad.append(("id", b["usage_id"]))
                if not any("type@vertical" in p for p in b["parents"]) or "type@course" not in b["parents"][-1]: bad.append(("parents", b["usage_id"]))
            print(bad)
            """
        let result = try TestSupport.run(python, ["-c", script, out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
    }

    /// No page may still point at /static/ for a file the course has: it must be bundled and linked relatively.
    @Test func noPageKeepsAResolvableStaticURLAndEveryRelativeLinkIsInItsArchive() throws {
        let (out, _) = try build(Self.demo)
        let python = try #require(TestSupport.which("python3"))
        let script = """
            import glob, json, os, re, sys, zipfile
            from html.parser import HTMLParser
            from urllib.parse import unquote, urlsplit
            out, course = sys.argv[1], sys.argv[2]
            static = os.path.join(course, "static")
            names = set()
            for root, _, files in os.walk(static):
                for f in files:
                    rel = os.path.relpath(os.path.join(root, f), static)
                    names.add(rel)
                    names.add(re.sub(r"[^A-Za-z0-9._%-]", "_", rel))
            class Links(HTMLParser):
                def __init__(self):
                    super().__init__(); self.urls = []
                def handle_starttag(self, tag, attrs):
                    for k, v in attrs:
                        if k in ("src", "href", "poster", "data") and v: self.urls.append(v)
                        if k == "srcset" and v: self.urls += [c.split()[0] for c in v.split(",") if c.strip()]
            stale, missing, checked = [], [], 0
            for path in glob.glob(os.path.join(out, "*", "*.zip")):
                if os.path.basename(os.path.dirname(path)) in ("runtime", "search"): continue
                z = zipfile.ZipFile(path)
                entries = set(z.namelist())
                parser = Links(); parser.feed(z.read("index.html").decode("utf-8", "replace"))
                for url in parser.urls:
                    p = urlsplit(url).path
                    if p.startswith("/static/") and unquote(p[len("/static/"):]) in names:
                        stale.append((path, url))
                    if p.startswith("static/"):
                        checked += 1
                        if unquote(p) not in entries: missing.append((path, url))
            print(json.dumps({"stale": stale, "missing": missing, "checked": checked}))
            """
        let result = try TestSupport.run(python, ["-c", script, out, Self.demo])
        #expect(result.status == 0, "\(result.stderr)")
        let data = Data(result.stdout.utf8)
        let summary = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((summary["stale"] as? [Any])?.isEmpty == true, "\(summary["stale"] ?? "")")
        #expect((summary["missing"] as? [Any])?.isEmpty == true, "\(summary["missing"] ?? "")")
        #expect((summary["checked"] as? Int ?? 0) > 100, "the demo course links to well over a hundred bundled files")
    }

    @Test func aTarballOfTheCourseGivesTheSameManifest() throws {
        let tarball = TestSupport.temporaryFolder("tgz") + "/demo.tar.gz"
        let tar = try #require(TestSupport.which("tar"))
        let packed = try TestSupport.run(tar, ["czf", tarball, "-C", (Self.demo as NSString).deletingLastPathComponent, "course"])
        #expect(packed.status == 0)
        let (fromFolder, _) = try build(Self.demo)
        let (fromTar, _) = try build(tarball)
        #expect(TestSupport.read(fromFolder + "/manifest.json") == TestSupport.read(fromTar + "/manifest.json"))
    }

    @Test func oneJobAndFourJobsGiveByteIdenticalOutput() throws {
        let (one, _) = try build(Self.demo, jobs: 1)
        let (four, _) = try build(Self.demo, jobs: 4)
        let files = TestSupport.files(under: one).filter { !$0.hasPrefix(".") }
        #expect(files == TestSupport.files(under: four).filter { !$0.hasPrefix(".") })
        for file in files {
            #expect(TestSupport.read(one + "/" + file) == TestSupport.read(four + "/" + file), "\(file) differs")
        }
    }
}
