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
    /// The course file system's timestamp granularity in nanoseconds (`TreeStamp.of`).
    public let timestampResolution: Int64

    public init(
        outputFolder: String, stateFolder: String, now: @escaping @Sendable () -> Int64 = FileStamp.now,
        timestampResolution: Int64 = 1
    ) {
        self.outputFolder = outputFolder
        self.stateFolder = stateFolder
        self.now = now
        self.timestampResolution = timestampResolution
    }

    /// The course as of `since` and everything else its output depends on (`settings`: the
    /// program, templates, options…), folded into one key; `settled` is false when a file
    /// changed so shortly before that a second change could leave its stamp as it is. Those
    /// files are `fresh`: a record made from these inputs trusts them by content hash only.
    public struct Inputs: Sendable, Equatable {
        public let key: String
        public let settled: Bool
        public let coursePath: String
        public let since: Int64
        public let newest: Int64
        public let fresh: [TreeStamp.Entry]
        /// What the walk saw of each plain file, when asked for (`collectsPlainFiles`): the
        /// build takes a file's stamp from here rather than from the disk once more. The build
        /// takes them out (`.none`) before it keeps the inputs for its record.
        public var plainFiles: PlainFileStamps
    }

    /// The running program's size and modification time: a cache of what this program's code
    /// computes (not of what the course holds) is only trusted by the program that wrote it.
    public static var programStamp: String {
        FileStamp.of("/proc/self/exe").map { "\($0.size)/\($0.modified)" } ?? "unknown"
    }

    /// Nil when the course cannot be walked; the build then reports why.
    /// `workers`: threads that `lstat` a big folder's entries (at 100,000 blocks, one thread
    /// took most of a second before a rebuild could start).
    /// `collectsPlainFiles`: the walk keeps each plain file's stamp (`Inputs.plainFiles`).
    public func stampInputs(
        coursePath: String, settings: [String], since: Int64 = FileStamp.now(), workers: Int = 1, collectsPlainFiles: Bool = false
    ) -> Inputs? {
        let skipped = [outputFolder, stateFolder].compactMap(TreeStamp.identity(of:))
        guard
            let course = TreeStamp.of(
                coursePath, skipping: skipped, since: since, workers: workers, resolution: timestampResolution,
                collectsPlainFiles: collectsPlainFiles)
        else { return nil }
        var hasher = SHA256()
        let program = Self.programStamp
        let canonicalCourse = realpath(coursePath, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? coursePath
        for part in ["coursepack-state-v\(BuildRecord<Int>.format)", program] + settings + [canonicalCourse, course.digest] {
            hasher.update(data: Array((part + "\n").utf8))
        }
        return Inputs(
            key: SHA256Hex.hex(hasher.finalize()), settled: course.settled, coursePath: coursePath, since: since,
            newest: course.newest, fresh: course.fresh,
            plainFiles: collectsPlainFiles ? course.plainFiles.rooted(at: canonicalCourse) : .none)
    }

    /// The manifest, its index, and everything in the archive folders (the index's parts too); a report written beside the
    /// manifest is not the publish. Files an older coursepack left at the top (`.coursepack…`)
    /// count, so a build that would find them does not stop before removing them.
    public func stampOutputs(workers: Int = 1, cancellation: TreeStamp.Cancellation? = nil) -> String? {
        TreeStamp.of(outputFolder, workers: workers, listsFresh: false, cancellation: cancellation) { name, depth, isFolder in
            depth > 1 || isFolder || name == Array("manifest.json".utf8) || name == Array("manifest-index.json".utf8)
                || name.starts(with: Array(".coursepack".utf8))
        }?.digest
    }

    /// Whether the last build left a record (so a stamp of the course is worth taking first).
    public var hasRecord: Bool {
        access(stateFolder + "/" + BuildRecord<Int>.fileName, F_OK) == 0
    }

    /// What the last clean build reported, when `inputs` match its record, every file it
    /// recorded by hash still has that content, and the output is exactly as it left it; the
    /// output is stamped on another thread meanwhile, and that stamp is given up as soon as the
    /// inputs differ. A record whose hashed files have since settled is saved again without
    /// them, so only the first no-op after an export reads them.
    public func unchangedSummary<Summary: Codable & Sendable & Equatable>(
        as type: Summary.Type, workers: Int = 1, inputs stampInputs: () -> Inputs?
    ) -> (Summary?, Inputs?) {
        guard var record = BuildRecord<Summary>.load(from: stateFolder) else { return (nil, stampInputs()) }
        let cancellation = TreeStamp.Cancellation()
        let outputs = Background { stampOutputs(cancellation: cancellation) }
        let inputs = stampInputs()
        guard let inputs, record.inputs == inputs.key else {
            cancellation.cancel()
            // Waited for: the walk ends within one entry, and reads nothing the build changes.
            _ = outputs.value
            return (nil, inputs)
        }
        guard outputs.value == record.outputs, Self.contentsMatch(record.hashedFiles, under: inputs.coursePath, workers: workers)
        else { return (nil, inputs) }
        if !record.hashedFiles.isEmpty {
            let stillFresh = Set(inputs.fresh.map(\.path))
            let kept = record.hashedFiles.filter { stillFresh.contains($0.path) }
            if kept.count < record.hashedFiles.count {
                record.hashedFiles = kept
                record.save(to: stateFolder)
            }
        }
        return (record.summary, inputs)
    }

    static func contentsMatch<Summary>(_ files: [BuildRecord<Summary>.HashedFile], under root: String, workers: Int) -> Bool {
        let matches = files.parallelMap(workers: files.count >= 64 ? workers : 1) { file in
            (try? SHA256Hex.ofFile(root + "/" + file.path)) == file.sha256
        }
        return !matches.contains(false)
    }

    /// Fresh files are hashed only up to these sizes: past them the record does not vouch for
    /// the fresh files, and the next build, once their stamps have settled, is an incremental
    /// build that reads only what changed. A fresh 20 GB file linked from nothing once added 30 s
    /// to a build and 10 s to the next (hashed again to compare).
    public static let largestHashedFreshFile: UInt64 = 256 << 20
    public static let largestHashedFreshTotal: UInt64 = 2 << 30

    /// The SHA-256 of each fresh file, read after the build; nil when one cannot be read, its
    /// stamp is no longer the one the walk saw (it changed while the build ran), or the fresh
    /// files are too large to hash.
    func hashFresh<Summary>(_ inputs: Inputs, workers: Int) -> [BuildRecord<Summary>.HashedFile]? {
        guard inputs.fresh.allSatisfy({ $0.stamp.size <= Self.largestHashedFreshFile }),
            inputs.fresh.map(\.stamp.size).reduce(0, { $0 &+ $1 }) <= Self.largestHashedFreshTotal
        else { return nil }
        let hashed = inputs.fresh.parallelMap(workers: inputs.fresh.count >= 64 ? workers : 1) { entry -> BuildRecord<Summary>.HashedFile? in
            let path = inputs.coursePath + "/" + entry.path
            guard let sha256 = try? SHA256Hex.ofFile(path), TreeStamp.stamp(of: path, resolution: timestampResolution) == entry.stamp
            else { return nil }
            return BuildRecord<Summary>.HashedFile(path: entry.path, sha256: sha256)
        }
        var files: [BuildRecord<Summary>.HashedFile] = []
        files.reserveCapacity(hashed.count)
        for file in hashed {
            guard let file else { return nil }
            files.append(file)
        }
        return files
    }

    /// Called before the output changes: until the build records again, nothing may be skipped.
    /// Block memos go too (load them first): a build killed before it saves new ones leaves none.
    public func forget() {
        unlink(stateFolder + "/" + BuildRecord<Int>.fileName)
        unlink(stateFolder + "/" + BuildRecord<Int>.previousFileName)
        unlink(stateFolder + "/" + blockMemosFileName)
        // The JSON memos an earlier coursepack kept, which nothing reads any more.
        unlink(stateFolder + "/blocks.json")
    }

    public func loadBlockMemos<Note: MemoNote>(as type: Note.Type) -> BlockMemos<Note> {
        BlockMemos.load(from: stateFolder)
    }

    public func save<Note: MemoNote>(_ memos: BlockMemos<Note>) {
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

    /// Records a finished build with the output as it is now. A course file changed after the
    /// build began (`since`) means no record; one changed shortly before is recorded with the
    /// hash of its content, which the build read after that change.
    public func record<Summary: Codable & Sendable & Equatable>(_ summary: Summary, inputs: Inputs, workers: Int) {
        guard inputs.newest < inputs.since else { return }
        let hashed: [BuildRecord<Summary>.HashedFile]
        if inputs.settled {
            hashed = []
        } else {
            guard let files: [BuildRecord<Summary>.HashedFile] = hashFresh(inputs, workers: workers) else { return }
            hashed = files
        }
        guard let outputs = stampOutputs(workers: workers) else { return }
        BuildRecord(inputs: inputs.key, outputs: outputs, summary: summary, hashedFiles: hashed).save(to: stateFolder)
    }

    public func loadFileHashes() -> FileHashCache {
        FileHashCache.load(from: stateFolder)
    }

    /// `readSince`: when the build began reading the files the cache vouches for (default: now).
    public func save(_ hashes: FileHashCache, readSince: Int64? = nil) {
        hashes.save(to: stateFolder, writtenAt: readSince ?? now())
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
