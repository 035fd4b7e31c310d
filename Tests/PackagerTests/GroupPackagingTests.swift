import Foundation
import Manifest
import Packager
import Testing
import TestSupport
import ZipArchive

/// A course whose unit holds a split test of two groups, each with its own html, beside an
/// html block for everyone and one restricted to a cohort.
func splitTestCourse() throws -> String {
    let root = TestSupport.temporaryFolder("split")
    try TestSupport.write([
        "course.xml": #"<course url_name="r" org="O" course="N"/>"#,
        "course/r.xml": #"<course><chapter url_name="c"/></course>"#,
        "chapter/c.xml": #"<chapter><sequential url_name="s"/></chapter>"#,
        "sequential/s.xml": #"<sequential><vertical url_name="v"/></sequential>"#,
        "vertical/v.xml": #"""
            <vertical><html url_name="everyone"/><split_test url_name="experiment" user_partition_id="0"
              group_id_to_child='{"0": "i4x://O/N/vertical/arm_a", "1": "i4x://O/N/vertical/arm_b"}'>
              <vertical url_name="arm_a"/><vertical url_name="arm_b"/></split_test>
            <html url_name="cohort_only"/></vertical>
            """#,
        "vertical/arm_a.xml": #"<vertical><html url_name="text_a"/></vertical>"#,
        "vertical/arm_b.xml": #"<vertical><html url_name="text_b"/></vertical>"#,
        "html/everyone.xml": "<html><p>For everyone</p></html>",
        "html/text_a.xml": "<html><p>Version A of the lesson</p></html>",
        "html/text_b.xml": "<html><p>Version B of the lesson</p></html>",
        "html/cohort_only.xml": #"<html group_access='{"50": [7]}'><p>Cohort 7 only</p></html>"#,
    ], under: root)
    return root
}

@Suite struct GroupPackagingTests {
    static let experiment = "block-v1:O+N+r+type@split_test+block@experiment"

    @Test func bothGroupsOfASplitTestAreArchivedEachWithItsPartitionAndGroup() throws {
        let (out, report) = try build(try splitTestCourse())
        #expect(report.errors.isEmpty && report.counts.built == 4)
        let blocks = try manifest(in: out).blocks
        let byName = Dictionary(uniqueKeysWithValues: blocks.map { ($0.usageID.components(separatedBy: "block@").last ?? "", $0) })
        let a = try #require(byName["text_a"]), b = try #require(byName["text_b"])
        #expect(a.splitTest == SplitTestGroupEntry(usageID: Self.experiment, userPartitionID: 0, groupID: 0))
        #expect(b.splitTest == SplitTestGroupEntry(usageID: Self.experiment, userPartitionID: 0, groupID: 1))
        #expect(a.groupAccess == ["0": [0]] && b.groupAccess == ["0": [1]])
        for (entry, text) in [(a, "Version A of the lesson"), (b, "Version B of the lesson")] {
            let archive = try #require(entry.archive)
            let page = String(decoding: try ZipReader(path: out + "/" + archive).contents(of: "index.html"), as: UTF8.self)
            #expect(page.contains(text), "\(archive)")
        }
        #expect(byName["everyone"]?.groupAccess == nil && byName["everyone"]?.splitTest == nil)
        #expect(byName["cohort_only"]?.groupAccess == ["50": [7]])
        let text = String(decoding: TestSupport.read(out + "/manifest.json"), as: UTF8.self)
        #expect(text.contains(#""schema_version" : 2"#))
    }

    @Test func aClientShowsALearnerOnlyTheirGroup() throws {
        let (out, _) = try build(try splitTestCourse())
        let published = try manifest(in: out)
        func names(_ groups: [Int: Int]) -> [String] {
            published.blocks(visibleToLearnerIn: groups).map { $0.usageID.components(separatedBy: "block@").last ?? "" }
        }
        #expect(names([0: 1]) == ["everyone", "text_b"])
        #expect(names([0: 0, 50: 7]) == ["everyone", "text_a", "cohort_only"])
        #expect(names([:]) == ["everyone"], "a learner in no group sees no group's content, as in the LMS")
    }

    @Test func aSchemaOneManifestIsReadAsThePreviousPublish() throws {
        let course = try splitTestCourse()
        let (out, _) = try build(course)
        // Rewrite the publish as schema 1 wrote it: no group fields, version 1.
        var old = try manifest(in: out)
        old.schemaVersion = 1
        for index in old.blocks.indices { old.blocks[index].groupAccess = nil; old.blocks[index].splitTest = nil }
        try ManifestFile.write(old, to: out + "/manifest.json")
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.errors.isEmpty && report.counts.reused == 4 && report.counts.built == 0, "unchanged archives are kept")
        let now = try manifest(in: out)
        #expect(now.schemaVersion == 2 && now.blocks.contains { $0.splitTest != nil })
        #expect(now.blocks.allSatisfy { $0.lastModified == "2026-11-22T10:00:00Z" })
    }

    @Test func aSplitTestChildInNoGroupIsArchivedForNoLearner() throws {
        let course = try splitTestCourse()
        try TestSupport.write(["vertical/v.xml": #"<vertical><split_test url_name="experiment" user_partition_id="4" group_id_to_child='{"1": "i4x://O/N/html/text_a"}'><html url_name="text_a"/><html url_name="text_b"/></split_test></vertical>"#], under: course)
        let (out, report) = try build(course)
        #expect(report.warnings.contains { $0.message.contains(#"<html> "text_b" of the split_test is in no group"#) })
        let blocks = try manifest(in: out).blocks
        let orphan = try #require(blocks.first { $0.usageID.hasSuffix("block@text_b") })
        #expect(orphan.archive != nil && orphan.groupAccess == ["4": []])
        #expect(orphan.splitTest == SplitTestGroupEntry(usageID: Self.experiment, userPartitionID: 4, groupID: nil))
        #expect(!orphan.isVisible(toLearnerIn: [4: 1]) && !orphan.isVisible(toLearnerIn: [:]))
        #expect(blocks.first { $0.usageID.hasSuffix("block@text_a") }?.isVisible(toLearnerIn: [4: 1]) == true)
    }

    @Test func theDemoCourseRecordsItsContentGroups() throws {
        let (out, _) = try build(TestSupport.demoCourse)
        let restricted = try manifest(in: out).blocks.filter { $0.groupAccess != nil }
        #expect(restricted.map(\.displayName) == ["Visible to Content Group A", "Visible to Content Group B"])
        #expect(restricted.map(\.groupAccess) == [["18587404": [1819362822]], ["18587404": [205150518]]])
    }
}

/// A permanently broken block is part of the result, like a warning: an unchanged course
/// still stops at unchanged inputs and reports the same error, with the same exit status.
@Suite struct RecordedFailureTests {
    @Test func anUnchangedCourseWithABrokenBlockTakesTheUnchangedPathAndFailsTheSameWay() throws {
        let course = try fourBlockCourse()
        try TestSupport.write(["html/c.xml": "<html filename=\"c\" <<< broken"], under: course)
        let (out, first) = try build(course, now: TestSupport.clockAhead)
        #expect(!first.inputsUnchanged && first.counts.failed == 1 && first.errors.count == 1)
        let (_, again) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(again.inputsUnchanged)
        #expect(again.errors == first.errors && again.counts.failed == 1, "the same error, so the exit status stays 1")
        #expect(again.counts.blocks == first.counts.blocks)
    }

    /// A block whose archive a client would refuse (here 600 KB of zeros, past the ratio) fails
    /// for its inputs however often it is built: the failure is remembered like a page. An
    /// unchanged course takes the unchanged path, an edit elsewhere does not make it again
    /// (at 100,500 entries that was a minute a build), and a fix of its file builds it.
    @Test func aBlockWhoseArchiveClientsWouldRefuseIsRememberedAsFailedUntilItsInputsChange() throws {
        let course = try fourBlockCourse()
        try TestSupport.write(["html/c.html": #"<p>Block c</p><a href="/static/zeros.txt">log</a>"#], under: course)
        #expect(FileManager.default.createFile(atPath: course + "/static/zeros.txt", contents: Data(count: 600 << 10)))
        let (out, first) = try build(course, now: TestSupport.clockAhead)
        let refusal = "block-v1:O+N+r+type@html+block@c"
        #expect(first.counts.failed == 1 && first.errors.map(\.block) == [refusal], "\(first.errors)")
        #expect(first.errors.first?.id == "CP314" && first.errors.first?.message.contains("a client would refuse") == true)

        let (_, again) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(again.inputsUnchanged, "a refusal by the limits is a result, not a write failure")
        #expect(again.errors == first.errors && again.counts.failed == 1)

        try TestSupport.write(["html/a.html": "<p>Block a, edited</p>"], under: course)
        let (_, edited) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(edited.counts.rendered == 1 && edited.counts.built == 1, "only a is made again: \(edited.counts)")
        #expect(edited.errors == first.errors && edited.counts.failed == 1, "c's failure is reported though c was not made again")

        #expect(FileManager.default.createFile(atPath: course + "/static/zeros.txt", contents: Data("a short log".utf8)))
        let (_, fixed) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(fixed.errors.isEmpty && fixed.counts.failed == 0, "\(fixed.errors)")
        #expect(try manifest(in: out).blocks.contains { $0.usageID == refusal && $0.archive != nil })
    }

    @Test func aBlockThatCouldNotBeWrittenIsTriedAgainNextTime() throws {
        let course = try fourBlockCourse()
        let out = TestSupport.temporaryFolder("out")
        // A file where the html archives' folder belongs: every archive write fails.
        try TestSupport.write(["html": "not a folder"], under: out)
        let (_, first) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(first.counts.failed == 4)
        let (_, again) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(!again.inputsUnchanged, "a write failure is not a result to replay")
        try FileManager.default.removeItem(atPath: out + "/html")
        let (_, fixed) = try build(course, into: out, now: TestSupport.clockAhead)
        #expect(!fixed.inputsUnchanged && fixed.counts.built == 4 && fixed.errors.isEmpty)
    }
}
