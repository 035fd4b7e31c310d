import BlockRenderer
import Foundation
import IncrementalBuild
import Packager
import TestSupport

/// The property incremental builds are held to: after any edit, building over the previous
/// publish gives exactly the bytes a build from scratch gives. `make test` runs it as
/// `IncrementalPropertyTests`; `make bench` runs it with more edits in the release build
/// (`coursepack-bench property`), so the larger run needs no debug build of the tests.
public enum IncrementalCheck {
    public static let publishedAt = "2026-11-22T10:00:00Z"

    /// One run: a course, how many random edits, the seed that picks them.
    public struct Run: Sendable, CustomStringConvertible {
        public let course: String
        public let edits: Int
        public let seed: UInt64
        public var description: String { "\(course), \(edits) edits, seed \(seed)" }
    }

    /// What a run found: the edits it applied, the kinds among them, and the first difference
    /// between the incremental and the fresh publish (nil when there was none).
    public struct Outcome: Sendable {
        public var editsApplied = 0
        public var kinds = Set<String>()
        public var failure: String?
    }

    /// `total` edits split between the example course and the demo course, whose builds take
    /// longer: a twenty-fifth of them, at least eight, go to the demo.
    public static func runs(totalEdits total: Int) -> [Run] {
        let total = max(total, 2)
        let demo = max(8, total / 25)
        return [Run(course: "example", edits: max(1, total - demo), seed: 11), Run(course: "demo", edits: demo, seed: 12)]
    }

    public static func perform(_ run: Run) throws -> Outcome {
        let course = TestSupport.temporaryFolder("property") + "/course"
        try TestSupport.copy(run.course == "demo" ? TestSupport.demoCourse : TestSupport.exampleCourse, to: course)
        // Page templates live outside the course, as `--templates DIR` does; edits reach them too.
        let templates = TestSupport.temporaryFolder("property") + "/templates"
        try TestSupport.copy(TestSupport.packageRoot + "/Templates", to: templates)
        let incremental = TestSupport.temporaryFolder("property") + "/published"
        defer {
            for folder in [course, templates, incremental, BuildOptions.defaultStateFolder(forOutput: incremental)] {
                try? FileManager.default.removeItem(atPath: folder)
            }
        }
        try build(course, templates: templates, into: incremental)
        var random = SeededGenerator(state: run.seed)
        var editor = CourseEditor(root: course, templates: templates)
        var outcome = Outcome()
        for step in 0..<run.edits {
            let edit = try editor.apply(step, using: &random)
            outcome.editsApplied += 1
            outcome.kinds = editor.kinds
            try build(course, templates: templates, into: incremental)
            let fresh = TestSupport.temporaryFolder("property") + "/fresh"
            try build(course, templates: templates, into: fresh)
            let difference = self.difference(incremental, fresh)
            try? FileManager.default.removeItem(atPath: fresh)
            try? FileManager.default.removeItem(atPath: BuildOptions.defaultStateFolder(forOutput: fresh))
            if let difference {
                outcome.failure = "after edit \(step) (\(edit)): \(difference)"
                break
            }
        }
        return outcome
    }

    /// How the caches a build saves unsynced may come back after a power cut.
    public enum LostCaches: String, CaseIterable, Sendable {
        /// As the build before the last one left them (their new version never reached the disk).
        case older
        /// Cut short mid-write.
        case damaged
        /// Gone.
        case missing
    }

    /// What changes between the build whose caches a power cut brings back and the next.
    /// Each is undone before the last build, so that the older caches match the course again
    /// while the publish they sit beside was made from other inputs.
    public enum EditBetweenBuilds: String, CaseIterable, Sendable {
        /// A page's text.
        case pageText
        /// A block moves to another unit: its content stays, its place (`parents`) does not.
        case blockMoved
        /// An online-only problem stays online-only, for another reason.
        case onlineOnlyReason

        /// Each file the edit changes: its path in the course, its bytes before and after.
        func files(in course: String) -> [(path: String, before: [UInt8], after: [UInt8])] {
            func replacing(_ file: String, _ old: String, with new: String) -> (String, [UInt8], [UInt8]) {
                let path = course + "/" + file, text = String(decoding: TestSupport.read(path), as: UTF8.self)
                return (path, Array(text.utf8), Array(text.replacingOccurrences(of: old, with: new).utf8))
            }
            switch self {
            case .pageText:
                let path = course + "/html/welcome_page.html", original = TestSupport.read(path)
                return [(path, original, original + Array("<p>An edit the next build publishes.</p>".utf8))]
            case .blockMoved:
                let handout = "<html url_name=\"handout_page\"/>"
                return [
                    replacing("vertical/media_unit.xml", handout, with: ""),
                    replacing("vertical/intro_unit.xml", "<html url_name=\"welcome_page\"/>", with: "<html url_name=\"welcome_page\"/>" + handout),
                ]
            case .onlineOnlyReason:
                let path = course + "/problem/offline_quiz.xml"
                return [(
                    path, Array("<problem display_name=\"Quick check\"><p>No question yet.</p></problem>".utf8),
                    Array("<problem display_name=\"Quick check\"><script type=\"loncapa/python\">x = 2</script><p>$x</p></problem>".utf8)
                )]
            }
        }
    }

    /// Builds the example course, edits it and builds again, then puts back the caches as a
    /// power cut may leave them (every state file but the synced build record), undoes the
    /// edit, so that the older caches match the course again, and builds once more. Returns the
    /// first difference from a build from scratch (nil when there is none).
    public static func buildAfterLosingCaches(_ lost: LostCaches, edit: EditBetweenBuilds) throws -> String? {
        let course = TestSupport.temporaryFolder("lost-caches") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let templates = TestSupport.packageRoot + "/Templates"
        let published = TestSupport.temporaryFolder("lost-caches") + "/published"
        let state = BuildOptions.defaultStateFolder(forOutput: published)
        let files = edit.files(in: course)
        guard files.allSatisfy({ $0.before != $0.after }) else { return "the edit \(edit) changes nothing in the example course" }
        for file in files { try TestSupport.writeBytes(file.before, to: file.path) }
        try build(course, templates: templates, into: published)
        let older = TestSupport.temporaryFolder("lost-caches") + "/older-state"
        try TestSupport.copy(state, to: older)
        for file in files { try TestSupport.writeBytes(file.after, to: file.path) }
        try build(course, templates: templates, into: published)
        let caches = TestSupport.files(under: state).filter { !$0.hasSuffix("record.bin") }
        guard caches.count >= 5 else { return "the build saved fewer caches than expected: \(caches)" }
        for cache in caches {
            let path = state + "/" + cache
            switch lost {
            case .older:
                if FileManager.default.fileExists(atPath: older + "/" + cache) {
                    try TestSupport.writeBytes(TestSupport.read(older + "/" + cache), to: path)
                } else {
                    unlink(path)
                }
            case .damaged: try TestSupport.writeBytes(Array(TestSupport.read(path).dropLast(7)), to: path)
            case .missing: unlink(path)
            }
        }
        for file in files { try TestSupport.writeBytes(file.before, to: file.path) }
        try build(course, templates: templates, into: published)
        let fresh = TestSupport.temporaryFolder("lost-caches") + "/fresh"
        try build(course, templates: templates, into: fresh)
        return difference(published, fresh)
    }

    /// The search step cuts its parts by the lengths `search-parts.bin` records for each
    /// document, and reads unchanged documents back from where it records them. A record of the
    /// right documents with wrong lengths or places (a checksum cannot tell: a fault in whatever
    /// wrote it) must cost work, not the index: the next build, after a page edit, equals a
    /// fresh one. Nil when it does.
    public enum SearchRecordFault: String, CaseIterable, Sendable {
        /// Every document's length far too long.
        case tooLong
        /// Every document's length a byte short.
        case short
        /// Pairs of documents with their lengths and places swapped: each names the other's
        /// bytes, whole, under its own fingerprint.
        case swapped
    }

    public static func buildWithSearchRecords(_ fault: SearchRecordFault) throws -> String? {
        let course = TestSupport.temporaryFolder("misrecorded") + "/course"
        try TestSupport.copy(TestSupport.demoCourse, to: course)
        let templates = TestSupport.packageRoot + "/Templates"
        let published = TestSupport.temporaryFolder("misrecorded") + "/published"
        try build(course, templates: templates, into: published)
        let path = BuildOptions.defaultStateFolder(forOutput: published) + "/search-parts.bin"
        let format = "coursepack-search-parts-v3"
        guard let records = RecordFile.load(path, format: format), let head = records.first else { return "no search-parts.bin after a build" }
        var misrecorded = RecordFile(format: format)
        misrecorded.add(head)
        var lengths = 0
        var held: [ArraySlice<UInt8>]?
        for fields in records.dropFirst() {
            // A document's record: its fingerprint, its length, its part's piece and offset,
            // its text key.
            let isDocument = [2, 4, 5].contains(fields.count) && fields[0].count == 32 && fields[1].count == 4
            let length = isDocument ? fields[1].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
            guard length > 0 else {
                misrecorded.add(fields)
                continue
            }
            lengths += 1
            switch fault {
            case .tooLong: misrecorded.add([fields[0], withUnsafeBytes(of: (length + 100_000).littleEndian) { Array($0) }[...]] + fields.dropFirst(2))
            case .short: misrecorded.add([fields[0], withUnsafeBytes(of: (length - 1).littleEndian) { Array($0) }[...]] + fields.dropFirst(2))
            case .swapped:
                guard let first = held else {
                    held = fields
                    continue
                }
                guard first.count >= 4, fields.count >= 4 else {
                    misrecorded.add(first)
                    misrecorded.add(fields)
                    held = nil
                    continue
                }
                misrecorded.add([first[0]] + fields[1...3] + first.dropFirst(4))
                misrecorded.add([fields[0]] + first[1...3] + fields.dropFirst(4))
                held = nil
            }
        }
        if let held { misrecorded.add(held) }
        guard lengths > 100 else { return "search-parts.bin records \(lengths) document lengths; the demo course has hundreds" }
        misrecorded.save(to: path, synced: false)
        let pages = try FileManager.default.contentsOfDirectory(atPath: course + "/html").filter { $0.hasSuffix(".html") }.sorted()
        guard let page = pages.first else { return "the demo course has no html file" }
        try TestSupport.writeBytes(TestSupport.read(course + "/html/" + page) + Array("<p>An edit after a bad record.</p>".utf8), to: course + "/html/" + page)
        try build(course, templates: templates, into: published)
        let fresh = TestSupport.temporaryFolder("misrecorded") + "/fresh"
        try build(course, templates: templates, into: fresh)
        return difference(published, fresh)
    }

    static func build(_ course: String, templates: String, into folder: String) throws {
        let options = try BuildOptions(
            outputFolder: folder, publishedAt: publishedAt, jobs: 2, templates: try PageTemplates.overriding(with: templates))
        _ = try CoursePackager(options: options).build(coursePath: course)
    }

    /// The first file whose presence or bytes differ between two published folders (what a
    /// client sees: the manifest and what it names; build state is not the publish).
    static func difference(_ a: String, _ b: String) -> String? {
        let left = TestSupport.files(under: a).filter { !$0.hasPrefix(".") }, right = TestSupport.files(under: b).filter { !$0.hasPrefix(".") }
        if left != right { return "files differ: \(Set(left).symmetricDifference(right).sorted().prefix(5))" }
        for file in left where TestSupport.read(a + "/" + file) != TestSupport.read(b + "/" + file) {
            return "\(file) differs"
        }
        return nil
    }
}
