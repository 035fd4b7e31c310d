import Diagnostics
import FileSystem
import Foundation
import Manifest
import Synchronization
import ZipArchive

/// One manifest as a build publishes it: its parts written (not yet synced), `manifest.json`
/// while it fits what clients accept, and `manifest-index.json`, with the warnings of what a
/// client would refuse. The top files are written by `writeTop`, after the caller has made the
/// parts and archives durable.
struct ManifestWrite {
    let index: ManifestIndex
    let indexBytes: [UInt8]
    /// Nil when the whole manifest is larger than clients accept: it is not written.
    let wholeBytes: [UInt8]?
    let warnings: [Diagnostic]
    /// What a client would refuse (`ManifestLimits`): a build that makes any of these publishes
    /// nothing, so that the publish in place, which clients take, stays.
    let refusals: [Diagnostic]
    /// Whether a part was written (its folder then needs a sync).
    let wroteParts: Bool
    /// Each block part's entries as it holds them, by the part's hash, while `manifest.json`
    /// may fit: an interim manifest's `manifest.json` is made of them too.
    let blockEntries: [String: ArraySlice<UInt8>]

    /// Writes every part of `manifest` that `out` does not hold yet, without waiting for the
    /// disk (`pending` gets each; the caller flushes it before the index that names them), on
    /// `workers` threads, never holding more than one part per worker. With `reusing`, the write
    /// of a manifest that differs from this one only in the entries at `changed`: the parts
    /// holding none of those are the same, and are neither made nor compared again. With
    /// `published`, the previous publish's parts that hold the same entries are named again.
    init(
        _ manifest: CourseManifest, in out: String, pending: PendingSyncs?, workers: Int,
        reusing base: (write: ManifestWrite, changed: Set<Int>)? = nil, published: ManifestSplit.PublishedParts? = nil,
        limits: ManifestLimits = .current
    ) throws(BuildError) {
        let limit = limits.maximumFileSize
        let folder = out + "/" + ManifestPart.folder
        let wrote = Mutex(false)
        // Kept no further than the limit: past it `manifest.json` is not written at all. Not kept
        // for a course of more blocks than fit at a kilobyte each (entries take one or two): at
        // 100,000 blocks that would be another 64 MiB held while the parts are made, for nothing.
        let keepsEntries = base.map { $0.write.wholeBytes != nil } ?? (manifest.blocks.count <= limit / 1024)
        let entries = Mutex((runs: base?.write.blockEntries ?? [:], bytes: 0, complete: keepsEntries))
        let made = ManifestSplit.index(of: manifest, workers: workers, reusing: base.map { ($0.write.index, $0.changed) }, published: published) {
            (reference, bytes) -> BuildError? in
            if reference.blocks > 0 {
                let range = ManifestFile.blockEntries(inPart: bytes)
                entries.withLock {
                    guard $0.complete, let range, $0.bytes + range.count <= limit else { return $0 = ([:], 0, false) }
                    $0.runs[reference.sha256] = bytes[range]
                    $0.bytes += range.count
                }
            }
            let path = out + "/" + reference.path
            guard !Self.holds(path, bytes) else { return nil }
            do {
                if access(folder, F_OK) != 0 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            } catch {
                return .output(path: folder, reason: "cannot create the folder of manifest parts")
            }
            do throws(FileError) {
                try DurableFile.replace(path, with: bytes, synced: pending == nil)
            } catch {
                return .output(path: path, reason: "cannot write the manifest part: \(String(cString: strerror(error.errno)))")
            }
            pending?.add(path)
            wrote.withLock { $0 = true }
            return nil
        }
        let entryBytes: Int
        switch made {
        case .success(let (index, bytes)):
            self.index = index
            entryBytes = bytes
        case .failure(let error):
            throw error
        }
        wroteParts = wrote.withLock { $0 } || (base?.write.wroteParts ?? false)
        indexBytes = ManifestFile.encode(index)
        // The entries alone are a lower bound of the whole manifest's size; past the limit it is
        // not encoded at all (at 100,000 blocks that would be another quarter of a gigabyte).
        // An interim manifest names longer (staged) paths than the final one: it fits only if
        // that does.
        let mayFit = base.map { $0.write.wholeBytes != nil } ?? (entryBytes <= limit)
        let kept = entries.withLock { $0 }
        var runs: [ArraySlice<UInt8>]? = kept.complete ? [] : nil
        var runsByPart = kept.runs
        for reference in index.parts where reference.blocks > 0 {
            // A part named again from the publish in place was not made here: its entries are
            // those its `manifest.json` was checked to hold. A part from a publish without one
            // brings none: then every entry is encoded, as for a manifest without parts.
            guard let run = kept.runs[reference.sha256] ?? published?.blockEntries[reference.sha256] else {
                runs = nil
                break
            }
            runsByPart[reference.sha256] = run
            runs?.append(run)
        }
        let whole = mayFit ? (runs.map { ManifestFile.encode(manifest, blockEntries: $0) } ?? [UInt8](ManifestFile.encode(manifest))) : nil
        assert(whole == nil || whole == [UInt8](ManifestFile.encode(manifest)), "manifest.json made of its parts' entries differs from its encoding")
        blockEntries = mayFit && runs != nil ? runsByPart : [:]
        wholeBytes = whole.flatMap { $0.count <= limit ? $0 : nil }

        var warnings: [Diagnostic] = []
        var refusals: [Diagnostic] = []
        func warn(_ file: String, _ message: String, _ id: DiagnosticID) {
            warnings.append(Diagnostic(block: manifest.courseID, file: file, message: message, id: id))
        }
        if wholeBytes == nil {
            let size = whole.map { "\($0.count)" } ?? "more than \(entryBytes)"
            warn(
                PublishedManifest.wholeFileName,
                "the whole manifest would be \(size) bytes, more than the \(limit) a client accepts: it is not written (a stale one is removed), so clients must read \(ManifestIndex.fileName) (coursepack-sync does)",
                .manifestSplitOnly)
        }
        // Locals: the closures below must not capture `self` before it is initialized.
        let written = index
        for refusal in written.clientRefusals(indexSize: indexBytes.count, limits: limits, planned: true) {
            let part = written.parts.first { $0.path == refusal.file && $0.blocks > 0 }
            let first = part.flatMap { Self.firstBlock(of: $0, in: written, manifest: manifest) }.map { ", from block \($0)" } ?? ""
            refusals.append(Diagnostic(
                block: manifest.courseID, file: out + "/" + refusal.file,
                message: "\(refusal.message)\(first): nothing is published, and the publish in place stays", id: .manifestBeyondClientLimit))
        }
        self.warnings = warnings
        self.refusals = refusals
    }

    /// The usage id of the first block a part holds.
    private static func firstBlock(of part: PartReference, in index: ManifestIndex, manifest: CourseManifest) -> String? {
        var start = 0
        for reference in index.parts {
            if reference == part { return start < manifest.blocks.count ? manifest.blocks[start].usageID : nil }
            start += reference.blocks
        }
        return nil
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
