import Diagnostics
import FileSystem
import Foundation
import Manifest
import ZipArchive

/// One manifest as a build publishes it: the parts, `manifest.json` while it fits what clients
/// accept, and `manifest-index.json`, with the warnings of what a client would refuse.
struct ManifestWrite {
    let manifest: CourseManifest
    let split: SplitManifest
    let indexBytes: [UInt8]
    /// Nil when the whole manifest is larger than clients accept: it is not written.
    let wholeBytes: [UInt8]?
    let warnings: [Diagnostic]

    init(_ manifest: CourseManifest, limits: ArchiveLimits = .current) {
        self.manifest = manifest
        let limit = limits.maximumManifestSize
        // The whole encoding is dropped before the parts are made when it is not written: at
        // 100,000 blocks each is a quarter of a gigabyte, and a build should not hold both.
        let wholeSize: Int
        do {
            let whole = [UInt8](ManifestFile.encode(manifest))
            wholeSize = whole.count
            wholeBytes = whole.count <= limit ? whole : nil
        }
        split = ManifestSplit.split(manifest)
        indexBytes = ManifestFile.encode(split.index)
        var warnings: [Diagnostic] = []
        func warn(_ file: String, _ message: String, _ id: DiagnosticID) {
            warnings.append(Diagnostic(block: manifest.courseID, file: file, message: message, id: id))
        }
        if wholeSize > limit {
            warn(
                PublishedManifest.wholeFileName,
                "the whole manifest would be \(wholeSize) bytes, more than the \(limit) a client accepts: it is not written (a stale one is removed), so clients must read \(ManifestIndex.fileName) (coursepack-sync does)",
                .manifestSplitOnly)
        }
        if indexBytes.count > limit {
            warn(ManifestIndex.fileName, "is \(indexBytes.count) bytes, more than the \(limit) a client accepts: clients refuse this publish", .manifestBeyondClientLimit)
        }
        if let part = split.parts.first(where: { $0.bytes.count > limit }) {
            warn(part.reference.path, "is \(part.bytes.count) bytes, more than the \(limit) a client accepts: clients refuse this publish", .manifestBeyondClientLimit)
        }
        if split.parts.count > ManifestSplit.maximumParts {
            warn(
                ManifestIndex.fileName, "names \(split.parts.count) parts, more than the \(ManifestSplit.maximumParts) a client reads: clients refuse this publish",
                .manifestBeyondClientLimit)
        }
        let total = split.parts.reduce(UInt64(0)) { $0 + UInt64($1.bytes.count) }
        if total > limits.maximumSplitManifestSize {
            warn(
                ManifestPart.folder,
                "the parts add up to \(total) bytes, more than the \(limits.maximumSplitManifestSize) a client assembles: clients refuse this publish",
                .manifestBeyondClientLimit)
        }
        self.warnings = warnings
    }

    /// Writes every part not yet in `out` (a part's name is its hash: one there already holds
    /// these bytes), without waiting for the disk: `pending` gets each, and the caller flushes
    /// it before the index that names them. Returns whether any was written.
    func writeParts(in out: String, pending: PendingSyncs?) throws(BuildError) -> Bool {
        let folder = out + "/" + ManifestPart.folder
        var wrote = false
        for part in split.parts {
            let path = out + "/" + part.reference.path
            guard !Self.holds(path, part.bytes) else { continue }
            if !wrote {
                do {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                } catch {
                    throw .output(path: folder, reason: "cannot create the folder of manifest parts")
                }
            }
            do {
                try DurableFile.replace(path, with: part.bytes, synced: pending == nil)
            } catch {
                throw .output(path: path, reason: "cannot write the manifest part: \(String(cString: strerror(error.errno)))")
            }
            pending?.add(path)
            wrote = true
        }
        return wrote
    }

    /// Whether the file at `path` holds exactly `bytes`. A part's name is its hash, but a file
    /// of that name may be what a crash left of an unsynced write (empty, or cut short): it is
    /// compared, never trusted by its name.
    static func holds(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let file = try? InputFile(path: path), (try? file.size) == UInt64(bytes.count),
            let onDisk = try? file.read(at: 0, count: bytes.count)
        else { return false }
        return onDisk == bytes
    }

    /// `manifest.json` (when it fits, and `whole` says it changed), then the index, each
    /// replaced atomically and durably; a `manifest.json` too large to write is removed once the
    /// index is in place, so no client reads an older course from it.
    func writeTop(in out: String, whole: Bool, index: Bool) throws(ManifestError) {
        let wholePath = out + "/" + PublishedManifest.wholeFileName
        if whole, let wholeBytes { try Self.replace(wholePath, with: wholeBytes) }
        if index { try Self.replace(out + "/" + ManifestIndex.fileName, with: indexBytes) }
        if wholeBytes == nil, unlink(wholePath) == 0 {
            do {
                try DurableFile.syncFolder(out)
            } catch {
                throw .unwritable(path: wholePath, reason: "its removal cannot be synced: \(error)")
            }
        }
    }

    private static func replace(_ path: String, with bytes: [UInt8]) throws(ManifestError) {
        let previousStamp = FileStamp.of(path)
        do {
            try DurableFile.replace(path, with: bytes)
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
        CoursePackager.advanceModificationTime(of: path, past: previousStamp?.modified)
    }

    /// Parts no index in place names go once the index that stopped naming them is; nothing
    /// outside `manifest/` is touched. Returns how many were removed.
    @discardableResult
    static func removeUnnamedParts(in out: String, keeping index: ManifestIndex) -> Int {
        let folder = out + "/" + ManifestPart.folder
        let named = Set(index.parts.map { ($0.path as NSString).lastPathComponent })
        var removed = 0
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() where !named.contains(name) {
            var info = stat()
            // unlink, not a recursive remove: a part is a file, never a folder.
            guard lstat(folder + "/" + name, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR, unlink(folder + "/" + name) == 0 else { continue }
            removed += 1
        }
        if rmdir(folder) == 0 {
            try? DurableFile.syncFolder(out)
        } else if removed > 0 {
            // A removal lost in a power cut would leave a part no index names, forever.
            try? DurableFile.syncFolder(folder)
        }
        return removed
    }
}
