import Foundation
import IncrementalBuild
import Testing
import TestSupport

/// The record a clean build leaves answers only while the course stamp and the whole output
/// are exactly as they were.
@Suite struct IncrementalBuildRecordTests {
    struct Summary: Codable, Sendable, Equatable {
        var blocks: Int
        var warnings: [String]
    }

    /// A note of a count and names, one field each; nil when a field is not what it wrote.
    struct Note: MemoNote {
        var count: Int
        var names: [String]

        var memoFields: [[UInt8]]? { count < 0 ? nil : [Array(String(count).utf8)] + names.map { Array($0.utf8) } }

        init(count: Int, names: [String]) { (self.count, self.names) = (count, names) }

        init?(memoFields fields: ArraySlice<ArraySlice<UInt8>>) {
            guard let first = fields.first, let count = Int(String(decoding: first, as: UTF8.self)) else { return nil }
            self.init(count: count, names: fields.dropFirst().map { String(decoding: $0, as: UTF8.self) })
        }
    }

    /// Memos come back as saved, each with its own note (none, one or many fields, empty ones
    /// and names with bytes a line-based file would break on among them); a note that cannot
    /// be written drops its memo only, and a file cut short reads as no memos at all.
    @Test func blockMemosComeBackWithTheirOwnNotes() throws {
        let state = TestSupport.temporaryFolder("memos")
        let build = IncrementalBuild(outputFolder: state + "/out", stateFolder: state)
        var memos = BlockMemos<Note>()
        for index in 0..<400 {
            let names = (0..<(index % 5)).map { "name \($0)\n\t\u{0}é" + String(repeating: "x", count: index % 7) } + (index % 11 == 0 ? [""] : [])
            memos.memos["block-\(index)"] = .init(inputs: "inputs-\(index)", contentHash: "hash-\(index)", note: Note(count: index, names: names))
        }
        var saved = memos
        saved.memos["unwritable"] = .init(inputs: "i", contentHash: "h", note: Note(count: -1, names: []))
        build.save(saved)
        let loaded = build.loadBlockMemos(as: Note.self)
        #expect(loaded == memos, "all but the memo whose note could not be written")

        let file = state + "/blocks.bin"
        let bytes = try #require(FileManager.default.contents(atPath: file))
        try bytes.prefix(bytes.count - 9).write(to: URL(fileURLWithPath: file))
        #expect(build.loadBlockMemos(as: Note.self).memos.isEmpty, "a damaged file is no memos")
    }

    /// Files the walk sees as settled: changed well before the stamp is taken.
    private func settledFile(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        let old = Date().addingTimeInterval(-60)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
    }

    @Test func aRecordAnswersUntilTheCourseOrTheOutputChanges() throws {
        let root = TestSupport.temporaryFolder("incremental")
        let course = root + "/course", out = root + "/out", state = root + "/state"
        for folder in [course, out + "/html", state] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try settledFile(course + "/course.xml", "<course/>")
        try settledFile(out + "/manifest.json", "{}")
        try settledFile(out + "/html/a.zip", "zip")
        let build = IncrementalBuild(outputFolder: out, stateFolder: state)
        // ctime cannot be set back: stamping "as of" a moment ahead counts the files just
        // written as settled.
        let stamp = { build.stampInputs(coursePath: course, settings: ["v1"], since: Date().timeIntervalSince1970Nanoseconds + 10_000_000_000) }
        let inputs = try #require(stamp())
        #expect(!build.hasRecord)
        build.record(Summary(blocks: 1, warnings: ["w"]), inputs: inputs, workers: 1)
        #expect(build.hasRecord)
        #expect(build.unchangedSummary(as: Summary.self, inputs: stamp).0 == Summary(blocks: 1, warnings: ["w"]))

        let otherSettings = { build.stampInputs(coursePath: course, settings: ["v2"]) }
        #expect(build.unchangedSummary(as: Summary.self, inputs: otherSettings).0 == nil, "another option or program")

        try settledFile(out + "/html/a.zip", "zap")
        #expect(build.unchangedSummary(as: Summary.self, inputs: stamp).0 == nil, "an archive rewritten in place")

        build.record(Summary(blocks: 1, warnings: []), inputs: try #require(stamp()), workers: 1)
        #expect(build.unchangedSummary(as: Summary.self, inputs: stamp).0 != nil)
        try settledFile(course + "/course.xml", "<course />")
        #expect(build.unchangedSummary(as: Summary.self, inputs: stamp).0 == nil, "a course file edited")
        build.forget()
        #expect(!build.hasRecord)
    }

    /// A file system whose times cannot tell two writes apart (modelled by a resolution that
    /// cuts every time to zero): an edit of the same size in place leaves the whole stamp as it
    /// was, so only the content hash recorded for the fresh file can show it.
    @Test func anEditTheStampCannotShowIsCaughtByTheFreshFilesHash() throws {
        let root = TestSupport.temporaryFolder("incremental")
        let course = root + "/course", out = root + "/out", state = root + "/state"
        for folder in [course, out, state] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        try "<course/>".write(toFile: course + "/course.xml", atomically: false, encoding: .utf8)
        try settledFile(out + "/manifest.json", "{}")
        let build = IncrementalBuild(outputFolder: out, stateFolder: state, timestampResolution: 1 << 62)
        let stamp = { build.stampInputs(coursePath: course, settings: ["v1"], since: Date().timeIntervalSince1970Nanoseconds) }
        let inputs = try #require(stamp())
        #expect(!inputs.settled && inputs.fresh.map(\.path) == ["course.xml"])
        build.record(Summary(blocks: 1, warnings: []), inputs: inputs, workers: 1)
        #expect(build.hasRecord, "a build right after its course was written is recorded")
        #expect(build.unchangedSummary(as: Summary.self, inputs: stamp).0 == Summary(blocks: 1, warnings: []))

        try "<COURSE/>".write(toFile: course + "/course.xml", atomically: false, encoding: .utf8)
        #expect(try #require(stamp()).key == inputs.key, "the stamp cannot show this edit")
        #expect(build.unchangedSummary(as: Summary.self, inputs: stamp).0 == nil, "the content hash does")
    }

    /// A course file written after the build began may have been read before or after that
    /// write: such a build is not recorded at all.
    @Test func aFileChangedAfterTheBuildBeganMeansNoRecord() throws {
        let root = TestSupport.temporaryFolder("incremental")
        let course = root + "/course", out = root + "/out", state = root + "/state"
        for folder in [course, out, state] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let began = Date().timeIntervalSince1970Nanoseconds - 1_000_000_000
        try "<course/>".write(toFile: course + "/course.xml", atomically: false, encoding: .utf8)
        let build = IncrementalBuild(outputFolder: out, stateFolder: state)
        build.record(Summary(blocks: 1, warnings: []), inputs: try #require(build.stampInputs(coursePath: course, settings: [], since: began)), workers: 1)
        #expect(!build.hasRecord)
    }

    /// What has settled is decided by the clock the build is given (`now`), never by reading
    /// the system clock behind its back: tests run builds ahead instead of sleeping.
    @Test func theGivenClockDecidesWhatHasSettled() throws {
        let root = TestSupport.temporaryFolder("incremental")
        try TestSupport.write(["static/a.png": "png"], under: root)
        let later = Date().timeIntervalSince1970Nanoseconds + 10_000_000_000
        #expect(IncrementalBuild.stamp(ofFolder: root + "/static") == nil, "just written: not settled now")
        #expect(IncrementalBuild.stamp(ofFolder: root + "/static", since: later) != nil, "settled ten seconds later")

        let build = IncrementalBuild(outputFolder: root + "/out", stateFolder: root, now: { later })
        build.save(FileHashCache())
        #expect(build.loadFileHashes().writtenAt == later, "the hash cache is stamped with the build's clock")
    }

    @Test func anArchiveIsKeptOnlyWithItsSizeAndUntouchedOrWithItsHash() throws {
        let root = TestSupport.temporaryFolder("incremental")
        let path = root + "/a.zip"
        try "abc".write(toFile: path, atomically: false, encoding: .utf8)
        let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        let later = Date().timeIntervalSince1970Nanoseconds + 10_000_000_000
        #expect(IncrementalBuild.archiveIsIntact(at: path, size: 3, sha256: "0", manifestWritten: later), "untouched since the manifest")
        #expect(!IncrementalBuild.archiveIsIntact(at: path, size: 4, sha256: sha, manifestWritten: later), "another size")
        #expect(IncrementalBuild.archiveIsIntact(at: path, size: 3, sha256: sha, manifestWritten: 0), "changed since, same bytes")
        #expect(!IncrementalBuild.archiveIsIntact(at: path, size: 3, sha256: "0", manifestWritten: 0), "changed since, other bytes")
        #expect(!IncrementalBuild.archiveIsIntact(at: root + "/missing.zip", size: 3, sha256: sha, manifestWritten: later))
    }
}

extension Date {
    var timeIntervalSince1970Nanoseconds: Int64 { Int64(timeIntervalSince1970 * 1e9) }
}
