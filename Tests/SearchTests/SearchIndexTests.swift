import ClientTarget
import CourseSearch
import FileSystem
import Foundation
import IncrementalBuild
import Manifest
import OfflineSearch
import Packager
import SyncClient
import Testing
import TestSupport
import ZipArchive

/// Builds `course` into a fresh (or the given) folder.
func build(_ course: String, into out: String? = nil) throws -> String {
    let folder = out ?? TestSupport.temporaryFolder("search-out")
    let options = try BuildOptions(outputFolder: folder, publishedAt: "2026-11-22T10:00:00Z", jobs: 2)
    _ = try CoursePackager(options: options).build(coursePath: course)
    return folder
}

/// Builds `course` into `out`, returning the report.
func reportedBuild(_ course: String, into out: String) throws -> BuildReport {
    let options = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 2)
    return try CoursePackager(options: options).build(coursePath: course)
}

/// The search index a build published, read back from its archive.
func publishedIndex(in out: String) throws -> (SearchArchive, SearchIndex) {
    let manifest = try #require(try ManifestFile.read(out + "/manifest.json"))
    let archive = try #require(manifest.search, "the manifest lists no search index")
    let unpacked = TestSupport.temporaryFolder("search-index")
    try ZipReader(path: out + "/" + archive.archive).extract(into: unpacked + "/x")
    return (archive, try SearchIndex.read(folder: unpacked + "/x"))
}

/// A device folder holding the published course, synced.
func syncedTarget(from published: String) async throws -> ClientTarget {
    let target = ClientTarget(root: TestSupport.temporaryFolder("search-target") + "/device")
    _ = try await target.sync(ClientTarget.SyncRequest(source: SyncSource(published)))
    return target
}

/// A course whose problem hides answers in every place OLX keeps them.
func courseWithPlantedAnswers() throws -> String {
    let root = TestSupport.temporaryFolder("search-course")
    try TestSupport.write([
        "course.xml": #"<course url_name="run1" org="Org" course="Num"/>"#,
        "course/run1.xml": #"<course display_name="Planted course" language="en"><chapter url_name="ch1"/></course>"#,
        "chapter/ch1.xml": #"<chapter display_name="Geography"><sequential url_name="seq1"/></chapter>"#,
        "sequential/seq1.xml": #"<sequential display_name="Capitals"><vertical url_name="v1"/></sequential>"#,
        "vertical/v1.xml": #"<vertical display_name="Europe"><html url_name="h1"/><problem url_name="p1"/><problem url_name="p2"/></vertical>"#,
        "html/h1.xml": #"<html filename="h1" display_name="Reading about rivers"/>"#,
        "html/h1.html": "<p>The Danube flows through many capitals.</p><script>var zyxwscript = 1;</script><style>.quuxstyle{}</style>",
        "problem/p1.xml": """
            <problem display_name="Capital quiz">
              <stringresponse answer="Plantedanswerone" type="ci">
                <label>Which city is the capital of Freedonia?</label>
                <additional_answer answer="Plantedadditional">Plantedadditionaltext</additional_answer>
                <correcthint>Plantedcorrecthint</correcthint>
                <stringequalhint answer="Plantedwrong">Plantedstringhint</stringequalhint>
                <textline size="20"/>
              </stringresponse>
              <multiplechoiceresponse>
                <label>Pick the largest of these rivers</label>
                <choicegroup type="MultipleChoice">
                  <choice correct="false">Seine<choicehint>Plantedchoicehint</choicehint></choice>
                  <choice correct="true">Volga</choice>
                </choicegroup>
              </multiplechoiceresponse>
              <numericalresponse answer="4242">
                <label>How long is it in kilometres</label>
                <responseparam type="tolerance" default="Plantedtolerance"/>
                <formulaequationinput/>
              </numericalresponse>
              <solution><div class="detailed-solution"><p>Plantedsolution explains it.</p></div></solution>
              <demandhint><hint>Planteddemandhint</hint></demandhint>
            </problem>
            """,
        "problem/p2.xml": """
            <problem display_name="Graded online">
              <customresponse cfn="check"><label>Write Plantedonlinequestion here</label><answer type="loncapa/python">Plantedpythonanswer</answer><textline/></customresponse>
              <script type="loncapa/python">def check(e, a): return "Plantedscript" in a</script>
            </problem>
            """,
    ], under: root)
    return root
}

@Suite(.serialized) struct SearchIndexTests {
    @Test func twoBuildsOfTheSameCoursePublishTheSameIndexBytes() throws {
        let first = try build(TestSupport.exampleCourse)
        let second = try build(TestSupport.exampleCourse)
        let (archiveA, _) = try publishedIndex(in: first)
        let (archiveB, _) = try publishedIndex(in: second)
        #expect(archiveA == archiveB)
        #expect(archiveA.archive.hasPrefix("search/") && archiveA.archive.count == "search/".count + 16 + 4)
        #expect(TestSupport.read(first + "/" + archiveA.archive) == TestSupport.read(second + "/" + archiveB.archive))
        try validateSchema(first + "/manifest.json")
    }

    @Test func aOnePageEditChangesTheIndexAndItsManifestEntryAndNothingElseOfTheIndex() throws {
        let course = TestSupport.temporaryFolder("search-edit") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let out = try build(course)
        let (before, indexBefore) = try publishedIndex(in: out)
        // An unchanged rebuild keeps the index archive as it was.
        _ = try build(course, into: out)
        #expect(try publishedIndex(in: out).0 == before)

        let page = course + "/html/welcome_page.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>Zanzibarian lighthouse keepers.</p>".utf8), to: page)
        _ = try build(course, into: out)
        let (after, indexAfter) = try publishedIndex(in: out)
        #expect(after.archive != before.archive)
        #expect(after.sha256 != before.sha256 && after.contentHash != before.contentHash)
        #expect(!FileManager.default.fileExists(atPath: out + "/" + before.archive), "the old index archive is removed")
        let changed = zip(indexBefore.documents, indexAfter.documents).filter { $0 != $1 }.map(\.1.usageID)
        #expect(changed == ["block-v1:CoursepackX+CP101+2026+type@html+block@welcome_page"])
        #expect(indexAfter.documents.first { $0.usageID.hasSuffix("welcome_page") }?.bodyTerms.contains("zanzibarian lighthouse") == true)

        // Renaming a chapter changes the path of the blocks in it; the text of unchanged blocks
        // is taken from the previous index, and the result is what a fresh build writes.
        let chapter = course + "/chapter/welcome.xml"
        try TestSupport.writeBytes(Array(String(decoding: TestSupport.read(chapter), as: UTF8.self)
            .replacingOccurrences(of: "display_name=\"Welcome\"", with: "display_name=\"Première étape\"").utf8), to: chapter)
        _ = try build(course, into: out)
        let (renamed, renamedIndex) = try publishedIndex(in: out)
        #expect(renamed != after)
        #expect(renamedIndex.documents.first { $0.usageID.hasSuffix("welcome_page") }?.pathTerms.hasPrefix("premiere etape") == true)
        let (fresh, _) = try publishedIndex(in: try build(course))
        #expect(fresh == renamed)
    }

    /// A rebuild reads from pages only the text of the pages that changed: every other document
    /// of a part made again is read back from the last build's part, whether it kept its name
    /// and place (its bytes as they were) or not (its text and terms under its new name, as
    /// after a chapter's rename), and what it publishes is what a fresh build publishes.
    @Test func aRebuildReadsTheTextOfOnlyTheChangedPages() throws {
        let course = TestSupport.temporaryFolder("search-reread") + "/course"
        try TestSupport.copy(TestSupport.demoCourse, to: course)
        let out = TestSupport.temporaryFolder("search-reread-out")
        let first = try reportedBuild(course, into: out)
        #expect(first.counts.searchTextsRead > 100, "a first build reads every page: \(first.counts.searchTextsRead)")
        #expect(!FileManager.default.fileExists(atPath: out + ".coursepack-state/search-texts"))

        let page = course + "/html/c912821348e0498eab881430f3399e06.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>Zanzibarian lighthouse keepers.</p>".utf8), to: page)
        let edited = try reportedBuild(course, into: out)
        #expect(edited.counts.searchTextsRead == 1)
        let (published, index) = try publishedIndex(in: out)
        #expect(published == (try publishedIndex(in: try build(course))).0)
        #expect(index.documents.contains { $0.bodyTerms.contains("zanzibarian lighthouse") })

        // Every block under the renamed chapter has a new path, and so a new fingerprint; none
        // of their pages changed.
        let chapter = try FileManager.default.contentsOfDirectory(atPath: course + "/chapter").sorted()
            .map { course + "/chapter/" + $0 }
            .first { String(decoding: TestSupport.read($0), as: UTF8.self).contains("display_name=\"Module 3: Ace the Assessments!\"") }
        let renamedChapter = try #require(chapter)
        try TestSupport.writeBytes(Array(String(decoding: TestSupport.read(renamedChapter), as: UTF8.self)
            .replacingOccurrences(of: "display_name=\"Module 3: Ace the Assessments!\"", with: "display_name=\"Première semaine\"").utf8), to: renamedChapter)
        let renamed = try reportedBuild(course, into: out)
        #expect(renamed.counts.searchTextsRead == 0, "\(renamed.counts)")
        #expect(renamed.counts.rendered == 0)
        let (afterRename, renamedIndex) = try publishedIndex(in: out)
        #expect(afterRename != published)
        #expect(renamedIndex.documents.contains { $0.pathTerms.hasPrefix("premiere semaine") })
        #expect(afterRename == (try publishedIndex(in: try build(course))).0)
    }

    /// The last build's parts are state, not the publish: one whose bytes are not those its key
    /// names (damaged, or changed by hand) is not read, and a rebuild reads the pages again,
    /// publishing what a fresh build publishes.
    @Test func aDamagedPieceOfTheLastIndexIsNotRead() throws {
        let course = TestSupport.temporaryFolder("search-damaged-piece") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let out = TestSupport.temporaryFolder("search-damaged-piece-out")
        _ = try reportedBuild(course, into: out)
        // A byte of every piece's deflated bytes changed, and the file sealed again with its
        // checksum, as a careful hand would: each piece still inflates to as many bytes.
        let chunks = out + ".coursepack-state"
        let format = "coursepack-search-chunks-v3"
        let records = try #require(RecordFile.load(chunks + "/search-chunks.bin", format: format))
        var resealed = RecordFile(format: format)
        for fields in records {
            var fields = fields.map { Array($0) }
            if fields.count == 4, fields[3].count > 8 { fields[3][fields[3].count / 2] ^= 0x01 }
            resealed.add(fields.map { $0[...] })
        }
        resealed.save(to: chunks + "/search-chunks.bin", synced: false)

        let page = course + "/html/welcome_page.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>Quaternion lamplighters.</p>".utf8), to: page)
        let rebuilt = try reportedBuild(course, into: out)
        #expect(rebuilt.counts.searchTextsRead >= 1)
        let (published, index) = try publishedIndex(in: out)
        #expect(published == (try publishedIndex(in: try build(course))).0)
        #expect(index.documents.contains { $0.bodyTerms.contains("quaternion lamplighters") })
    }

    /// A state folder an earlier coursepack left holds the per-block texts it read from
    /// (`search-texts/`): the next build removes them, and nothing else.
    @Test func theTextsAnEarlierVersionKeptAreRemoved() throws {
        let course = TestSupport.temporaryFolder("search-legacy-texts") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let out = TestSupport.temporaryFolder("search-legacy-texts-out")
        let texts = out + ".coursepack-state/search-texts"
        try FileManager.default.createDirectory(atPath: texts, withIntermediateDirectories: true)
        try TestSupport.writeBytes(Array("old".utf8), to: texts + "/17.bin")
        try TestSupport.writeBytes(Array("mine".utf8), to: texts + "/notes.txt")
        _ = try reportedBuild(course, into: out)
        #expect(!FileManager.default.fileExists(atPath: texts + "/17.bin"))
        #expect(FileManager.default.fileExists(atPath: texts + "/notes.txt"), "only the shard files it wrote")
    }

    /// The documents are in parts named after their hashes: an edit to one page of the demo
    /// course gives one new part and a new index.js; every other part keeps its name and bytes,
    /// so a client that has them downloads only those two files.
    @Test func aOnePageEditOfTheDemoChangesOnePartOfTheIndex() throws {
        let course = TestSupport.temporaryFolder("search-demo-edit") + "/course"
        try TestSupport.copy(TestSupport.demoCourse, to: course)
        let out = try build(course)
        let (before, indexBefore) = try publishedIndex(in: out)
        let page = course + "/html/c912821348e0498eab881430f3399e06.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>Zanzibarian lighthouse keepers.</p>".utf8), to: page)
        _ = try build(course, into: out)
        let (after, indexAfter) = try publishedIndex(in: out)
        let (listedBefore, listedAfter) = (try #require(before.files), try #require(after.files))
        #expect(listedBefore.count > 3 && listedBefore.count == listedAfter.count)
        let newFiles = Set(listedAfter.map { "\($0.key)=\($0.value)" }).subtracting(listedBefore.map { "\($0.key)=\($0.value)" })
        #expect(newFiles.count == 2, "index.js and one part: \(newFiles.sorted())")
        #expect(newFiles.contains { $0.hasPrefix("index.js=") })
        #expect(indexAfter.documents.count == indexBefore.documents.count)
        #expect(indexAfter.documents.contains { $0.bodyTerms.contains("zanzibarian lighthouse") })
    }

    @Test func plantedAnswersAreNeverIndexedAndTheQuestionsAre() async throws {
        let published = try build(try courseWithPlantedAnswers())
        let (_, index) = try publishedIndex(in: published)
        let everything = index.documents.map { [$0.text, $0.titleTerms, $0.pathTerms, $0.bodyTerms].joined(separator: " ") }.joined(separator: " ").lowercased()
        for planted in [
            "plantedanswerone", "plantedadditional", "plantedcorrecthint", "plantedwrong", "plantedstringhint", "plantedchoicehint",
            "4242", "plantedtolerance", "plantedsolution", "planteddemandhint", "plantedpythonanswer", "plantedscript", "zyxwscript", "quuxstyle",
        ] {
            #expect(!everything.contains(planted), "\(planted) is in the search index")
        }
        // Nor the form's own controls and notes, the same on every problem page.
        #expect(!everything.contains("answers are kept"))
        #expect(!everything.contains("submit"))
        let target = try await syncedTarget(from: published)
        let search = TargetSearch(target: target)
        for planted in ["Plantedanswerone", "Plantedsolution", "Planteddemandhint", "Plantedchoicehint", "\"Plantedpythonanswer\""] {
            #expect(try search.search(planted).isEmpty, "\(planted) was found")
        }
        let question = try search.search("capital Freedonia")
        #expect(question.first?.usageID == "block-v1:Org+Num+run1+type@problem+block@p1")
        #expect(question.first?.state == "installed")
        // The visible choices are what the learner reads.
        #expect(try search.search("Volga").first?.usageID == "block-v1:Org+Num+run1+type@problem+block@p1")
        // A problem graded online is found by its name, listed as online only.
        let online = try search.search("graded online")
        #expect(online.first?.state == "online_only")
        #expect(online.first?.page == nil)
    }

    @Test func demoPhrasesFromAPageAProblemAndATranscriptFindTheirBlocksFirst() async throws {
        #expect(FileManager.default.fileExists(atPath: TestSupport.demoCourse + "/course.xml"), "the demo course corpus is missing")
        let target = try await syncedTarget(from: try build(TestSupport.demoCourse))
        let search = TargetSearch(target: target)
        let expected = [
            // html: the welcome page's text.
            #""leading open-source online learning platforms""#: "type@html+block@a01fc100e5e64fc5bbca09daa190cfee",
            "globe leading platforms": "type@html+block@a01fc100e5e64fc5bbca09daa190cfee",
            // problems: question text.
            "symbol Ancient Rome": "type@problem+block@870b16e640d541af94a308caac834d2e",
            "Pendleton tanker": "type@problem+block@b20c43dfbd874a729762ab44a1dfc282",
            "traditional abacus": "type@problem+block@ef8c3814d2ce47c6927a8310bba4b849",
            // video transcripts.
            "Harvard MIT mission": "type@video+block@d5a54ce52f464acfa7a83ae155712cc3",
            "revolution digital learning": "type@video+block@b18dceef48234944a8d64ac6937ec6bd",
        ]
        for (query, block) in expected.sorted(by: { $0.key < $1.key }) {
            let results = try search.search(query)
            #expect(results.first?.usageID == "block-v1:OpenedX+DemoX+DemoCourse+" + block, "\(query): \(results.prefix(3).map(\.title))")
            #expect(results.first?.state == "installed")
            #expect(results.first.map { FileManager.default.fileExists(atPath: $0.page ?? "") } == true)
            #expect(results.first?.snippet.isEmpty == false)
        }
    }

    @Test func theCommandLineSearchesRanksAndRefusesBadQueries() async throws {
        let target = try await syncedTarget(from: try build(try courseWithPlantedAnswers()))
        let found = try TestSupport.coursepack(["search", target.root, "Danube", "--json"])
        #expect(found.status == 0, "\(found.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(found.stdout.utf8)) as? [String: Any])
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.first?["usage_id"] as? String == "block-v1:Org+Num+run1+type@html+block@h1")
        #expect((results.first?["snippet"] as? String)?.contains("Danube flows") == true)
        let plain = try TestSupport.coursepack(["search", target.root, "Freedonia", "--course", "course-v1:Org+Num+run1"])
        #expect(plain.status == 0)
        #expect(plain.stdout.contains("Capital quiz") && plain.stdout.contains("problem/p1/index.html"))
        for (query, message) in [("", "no words"), ("the of", "too common")] {
            let refused = try TestSupport.coursepack(["search", target.root, query])
            #expect(refused.status == 2)
            #expect(refused.stderr.contains(message), "\(refused.stderr)")
        }
        let unknown = try TestSupport.coursepack(["search", target.root, "Danube", "--course", "course-v1:No+Such+Course"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no such course"))
    }

    @Test func titlesWeighMoreAndPhrasesMatchOnlyInOrder() async throws {
        let published = try build(try courseWithPlantedAnswers())
        let search = TargetSearch(target: try await syncedTarget(from: published))
        // "rivers" is the html block's title and a word of the problem's text: the title wins.
        #expect(try search.search("rivers").first?.usageID == "block-v1:Org+Num+run1+type@html+block@h1")
        #expect(try search.search(#""capitals Danube""#).isEmpty)
        #expect(try search.search(#""Danube flows""#).map(\.usageID) == ["block-v1:Org+Num+run1+type@html+block@h1"])
        // Accents and case in the query fold like the text's.
        #expect(try search.search("DANÚBE").map(\.usageID) == ["block-v1:Org+Num+run1+type@html+block@h1"])
        #expect(throws: SearchError.query(.onlyStopWords(["the", "of"]))) { try search.search("the of") }
        #expect(throws: SearchError.query(.empty)) { try search.search("  ") }
    }

    @Test func aDamagedIndexIsNamedAndTheNextSyncRepairsIt() async throws {
        let published = try build(TestSupport.exampleCourse)
        let target = try await syncedTarget(from: published)
        let search = TargetSearch(target: target)
        #expect(try !search.search("offline bundles").isEmpty)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let folder = String(try #require(manifest.search).archive.dropLast(4))
        let indexFile = target.root + "/CoursepackX+CP101+2026/" + folder + "/" + SearchIndex.fileName
        var bytes = TestSupport.read(indexFile)
        bytes[bytes.count / 2] ^= 0x20
        try TestSupport.writeBytes(bytes, to: indexFile)
        do {
            _ = try search.search("offline bundles")
            Issue.record("a damaged index was read")
        } catch {
            guard case .damaged(let damage) = error else { Issue.record("\(error)"); return }
            #expect("\(damage)".contains(indexFile))
        }
        let report = try await target.sync(ClientTarget.SyncRequest(source: SyncSource(published)))
        #expect(report.repairs.contains { $0.contains(folder) })
        #expect(try !search.search("offline bundles").isEmpty)
        // The database is a cache of the index: an unreadable one is built again, not reported.
        try TestSupport.writeBytes(Array("not a database".utf8), to: target.root + "/CoursepackX+CP101+2026/.coursepack-sync/search.sqlite")
        #expect(try !search.search("offline bundles").isEmpty)
    }

    @Test func theOutlinePageOffersSearchWhenTheIndexIsInstalled() async throws {
        let published = try build(TestSupport.exampleCourse)
        let target = try await syncedTarget(from: published)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let folder = String(try #require(manifest.search).archive.dropLast(4))
        let outline = String(decoding: TestSupport.read(target.root + "/CoursepackX+CP101+2026/index.html"), as: UTF8.self)
        #expect(outline.contains("<script src=\"\(folder)/index.js\" id=\"coursepack-search-index\"></script>"))
        #expect(outline.contains("id=\"coursepack-search-query\""))
    }
}

/// Validates a manifest against schema/manifest.schema.json with Python's jsonschema.
func validateSchema(_ manifestPath: String) throws {
    let python = try #require(TestSupport.which("python3"))
    let script = """
        import json, sys
        import jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.validate(json.load(open(sys.argv[2])), schema, cls=jsonschema.Draft202012Validator)
        """
    let result = try TestSupport.run(python, ["-c", script, TestSupport.packageRoot + "/schema/manifest.schema.json", manifestPath])
    #expect(result.status == 0, "manifest does not match its schema: \(result.stderr)")
}
