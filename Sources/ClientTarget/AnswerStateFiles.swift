import FileSystem
import Foundation
import Manifest
import SyncClient

/// The graded state of each problem, written where its page can read it from `file://`:
/// `TARGET/<course>/.coursepack-sync/state/<type>/<name>.js` beside the block's
/// `TARGET/<course>/<type>/<name>/index.html`, loaded by `<script src>` (a `file://` page may
/// load a script by a relative path; it may not fetch). It is a view of the outbox, made again
/// whenever answers or their results are recorded, never the only copy of anything.
///
/// In the state folder, not in the block's: a block folder is swapped whole when it is updated
/// and checked against its archive's file list, and `serve` never serves a hidden folder, so
/// another site's page cannot read a learner's answers from it with a `<script>` element (served
/// pages ask serve's state endpoint, with the run's secret, instead).
public enum AnswerStateFiles {
    public static let folderName = "state"

    /// The state file of a block installed in `folder` (`problem/x`), relative to the course.
    public static func relativePath(ofBlockFolder folder: String) -> String {
        ClientTarget.stateFolderName + "/" + folderName + "/" + folder + ".js"
    }

    /// Writes the state file of every installed problem of the course at `courseRoot` (an empty
    /// one where no answer was given, so a page's load of it never fails) and of every other
    /// installed block with answers, and removes the others. Files whose content is unchanged
    /// are left alone. Throws the first file that could not be written; the others are written.
    /// `local`: the course's local manifest when the caller holds it (at 100,000 blocks,
    /// reading it again takes seconds).
    public static func write(courseRoot: String, local: CourseManifest? = nil) throws(ClientError) {
        guard let manifest = local ?? (try? ManifestFile.read(courseRoot + "/manifest.json")) else { return }
        let states = BlockState.latest(in: Outbox(folder: SyncClient.stateFolder(of: courseRoot)).entries())
        var wanted: [String: [UInt8]] = [:]
        for block in manifest.blocks where block.isOffline && (block.type == "problem" || states[block.usageID] != nil) {
            guard let archive = block.archive, let folder = ArchivePath.installFolder(of: archive) else { continue }
            wanted[relativePath(ofBlockFolder: folder)] = BlockState.script(usageID: block.usageID, state: states[block.usageID])
        }
        var failure: ClientError?
        for (relative, bytes) in wanted.sorted(by: { $0.key < $1.key }) {
            do { try replace(courseRoot + "/" + relative, with: bytes) } catch { failure = failure ?? error }
        }
        removeOthers(in: SyncClient.stateFolder(of: courseRoot) + "/" + folderName, keeping: Set(wanted.keys.map { courseRoot + "/" + $0 }))
        if let failure { throw failure }
    }

    /// Writes one block's state from `entry` alone: what `serve` does for an answer just posted,
    /// without reading the course's whole outbox (the next full write corrects it, should an
    /// older answer ever be posted after a newer one).
    public static func write(_ entry: AnswerEntry, courseRoot: String) throws(ClientError) {
        guard let block = BlockLocations.location(of: entry.usageID, courseRoot: courseRoot), block.offline, let folder = block.folder else { return }
        try replace(courseRoot + "/" + relativePath(ofBlockFolder: folder), with: BlockState.script(usageID: entry.usageID, state: BlockState(entry)))
    }

    /// The latest state of block `usageID`, from the outbox of the course that has it installed;
    /// nil when no course of `target` has it installed, `.some(nil)` when it has no answer.
    public static func state(of usageID: String, in target: ClientTarget) throws(ClientError) -> BlockState?? {
        guard let course = try target.courseFolders().first(where: { BlockLocations.location(of: usageID, courseRoot: $0)?.offline == true }) else {
            return nil
        }
        let entries = Outbox(folder: SyncClient.stateFolder(of: course)).entries().filter { $0.usageID == usageID }
        return .some(BlockState.latest(in: entries)[usageID])
    }

    /// `write(_:courseRoot:)` for the course whose outbox is `outbox`.
    public static func write(_ entry: AnswerEntry, besides outbox: Outbox) throws(ClientError) {
        try write(entry, courseRoot: DurableFile.folder(of: DurableFile.folder(of: outbox.path)))
    }

    /// Replaces the file unless it holds `bytes` already. Not synced: it is made again from the
    /// outbox whenever it is lost. A temporary name of this write's own, so two writers (serve
    /// and a submit) never write into one temporary file.
    static func replace(_ path: String, with bytes: [UInt8]) throws(ClientError) {
        if let current = WholeFile.readIfUsable(path, atMost: UInt64(bytes.count)), current == bytes { return }
        let folder = DurableFile.folder(of: path)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .local(path: folder, reason: "cannot create the folder for the page's answer state")
        }
        let temporary = DurableFile.temporaryPath(beside: path, unique: true)
        let written = FileManager.default.createFile(atPath: temporary, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
        guard written, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .local(path: path, reason: "cannot write the page's answer state: \(reason)")
        }
    }

    /// Removes state files of blocks no longer installed (or with no state), type folders left
    /// empty, and temporary files of writers that are gone.
    static func removeOthers(in stateRoot: String, keeping kept: Set<String>) {
        let fm = FileManager.default
        for type in (try? fm.contentsOfDirectory(atPath: stateRoot)) ?? [] {
            let typeFolder = stateRoot + "/" + type
            var info = stat()
            guard lstat(typeFolder, &info) == 0 else { continue }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                unlink(typeFolder)
                continue
            }
            for name in (try? fm.contentsOfDirectory(atPath: typeFolder)) ?? [] where !kept.contains(typeFolder + "/" + name) {
                if DurableFile.isTemporaryName(name), let pid = writerPID(name), kill(pid, 0) == 0 || errno != ESRCH { continue }
                unlink(typeFolder + "/" + name)
            }
            rmdir(typeFolder)  // only when empty
        }
    }

    /// The pid in `.<name>.tmp-<pid>-<random>`.
    static func writerPID(_ name: String) -> Int32? {
        guard let range = name.range(of: ".tmp-", options: .backwards) else { return nil }
        return name[range.upperBound...].split(separator: "-").first.flatMap { Int32($0) }
    }
}

extension ClientTarget {
    /// Writes the answer state files of every course of the target (see `AnswerStateFiles`);
    /// returns what could not be written. Hosts call it after recording answers or results.
    public func writeAnswerStates() -> [ClientError] {
        let roots: [String]
        do { roots = try courseRoots().map(\.root) } catch { return [error] }
        var failures: [ClientError] = []
        for root in roots {
            do { try AnswerStateFiles.write(courseRoot: root) } catch { failures.append(error) }
        }
        return failures
    }
}
