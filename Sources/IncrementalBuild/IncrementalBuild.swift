import Crypto
import FileSystem
import Foundation
import ParallelMap

/// The incremental build's one interface: what a build may skip, decided from what the last
/// build of the same output folder recorded in its state folder. The whole build is skipped
/// when the course, the settings and the output are exactly as the last clean build left them;
/// a block is not rendered again while its inputs are those its memo records; a block's archive
/// is kept when its content is unchanged and the file is intact; a static file is not hashed
/// again while its stamp is unchanged.
public struct IncrementalBuild: Sendable {
    public let outputFolder: String
    public let stateFolder: String
    /// Now on the file-time clock, in nanoseconds (`FileStamp.now`); tests set it ahead.
    public let now: @Sendable () -> Int64

    public init(outputFolder: String, stateFolder: String, now: @escaping @Sendable () -> Int64 = FileStamp.now) {
        self.outputFolder = outputFolder
        self.stateFolder = stateFolder
        self.now = now
    }

    /// The course as of `since` and everything else its output depends on (`settings`: the
    /// program, templates, options…), folded into one key; `settled` is false when a file
    /// changed so shortly before that a second change could leave its stamp as it is.
    public struct Inputs: Sendable, Equatable {
        public let key: String
        public let settled: Bool
    }

    /// Nil when the course cannot be walked; the build then reports why.
    public func stampInputs(coursePath: String, settings: [String], since: Int64 = FileStamp.now()) -> Inputs? {
        let skipped = [outputFolder, stateFolder].compactMap(TreeStamp.identity(of:))
        guard let course = TreeStamp.of(coursePath, skipping: skipped, since: since) else { return nil }
        var hasher = SHA256()
        let program = FileStamp.of("/proc/self/exe").map { "\($0.size)/\($0.modified)" } ?? "unknown"
        let canonicalCourse = realpath(coursePath, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? coursePath
        for part in ["coursepack-state-v\(BuildRecord<Int>.format)", program] + settings + [canonicalCourse, course.digest] {
            hasher.update(data: Array((part + "\n").utf8))
        }
        return Inputs(key: SHA256Hex.hex(hasher.finalize()), settled: course.settled)
    }

    /// The manifest, its index, and everything in the archive folders (the index's parts too); a report written beside the
    /// manifest is not the publish. Files an older coursepack left at the top (`.coursepack…`)
    /// count, so a build that would find them does not stop before removing them.
    public func stampOutputs(workers: Int = 1) -> String? {
        TreeStamp.of(outputFolder, workers: workers) { name, depth, isFolder in
            depth > 1 || isFolder || name == Array("manifest.json".utf8) || name == Array("manifest-index.json".utf8)
                || name.starts(with: Array(".coursepack".utf8))
        }?.digest
    }

    /// Whether the last build left a record (so a stamp of the course is worth taking first).
    public var hasRecord: Bool {
        access(stateFolder + "/" + BuildRecord<Int>.fileName, F_OK) == 0
    }

    /// What the last clean build reported, when `inputs` match its record and the output is
    /// exactly as it left it; the output is stamped on another thread meanwhile.
    public func unchangedSummary<Summary: Codable & Sendable & Equatable>(
        as type: Summary.Type, inputs stampInputs: () -> Inputs?
    ) -> (Summary?, Inputs?) {
        let outputs = Background { stampOutputs() }
        let inputs = stampInputs()
        let outputsNow = outputs.value
        guard let record = BuildRecord<Summary>.load(from: stateFolder), let inputs, record.inputs == inputs.key,
            outputsNow == record.outputs
        else { return (nil, inputs) }
        return (record.summary, inputs)
    }

    /// Called before the output changes: until the build records again, nothing may be skipped.
    /// Block memos go too (load them first): a build killed before it saves new ones leaves none.
    public func forget() {
        unlink(stateFolder + "/" + BuildRecord<Int>.fileName)
        unlink(stateFolder + "/" + BlockMemos<Int>.fileName)
        // The JSON memos an earlier coursepack kept, which nothing reads any more.
        unlink(stateFolder + "/blocks.json")
    }

    public func loadBlockMemos<Note: Codable & Sendable & Equatable>(as type: Note.Type) -> BlockMemos<Note> {
        BlockMemos.load(from: stateFolder)
    }

    public func save<Note: Codable & Sendable & Equatable>(_ memos: BlockMemos<Note>) {
        memos.save(to: stateFolder)
    }

    /// A digest that changes whenever anything under `folder` is created, removed, written or
    /// replaced (`TreeStamp`), and a fixed value when it is absent; nil when it cannot be read or
    /// something in it changed so recently that a second change could leave the stamp as it is.
    public static func stamp(ofFolder folder: String, since: Int64 = FileStamp.now()) -> String? {
        guard access(folder, F_OK) == 0 else { return "absent" }
        guard let stamp = TreeStamp.of(folder, since: since), stamp.settled else { return nil }
        return stamp.digest
    }

    /// Records a finished build whose inputs had settled, with the output as it is now.
    public func record<Summary: Codable & Sendable & Equatable>(_ summary: Summary, inputs: Inputs, workers: Int) {
        guard inputs.settled, let outputs = stampOutputs(workers: workers) else { return }
        BuildRecord(inputs: inputs.key, outputs: outputs, summary: summary).save(to: stateFolder)
    }

    public func loadFileHashes() -> FileHashCache {
        FileHashCache.load(from: stateFolder)
    }

    public func save(_ hashes: FileHashCache) {
        hashes.save(to: stateFolder, writtenAt: now())
    }

    /// Names of state files an older coursepack kept inside the output folder itself.
    public static var legacyFileNames: [String] {
        [FileHashCache.legacyFileName, BuildRecord<Int>.legacyFileName]
    }

    /// Whether the archive at `path`, which a manifest written at `manifestWritten` names with
    /// `size` and `sha256`, may be kept as it is. It must have that size; one changed since the
    /// manifest was written (ctime) is hashed before it is trusted.
    public static func archiveIsIntact(at path: String, size: UInt64, sha256: String, manifestWritten: Int64?) -> Bool {
        guard let stamp = FileStamp.of(path), stamp.size == size else { return false }
        return stamp.changed < (manifestWritten ?? Int64.min) || (try? SHA256Hex.ofFile(path)) == sha256
    }
}
