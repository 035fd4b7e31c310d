import FileSystem
import Foundation
import Manifest
import ZipArchive

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a split manifest (`manifest-index.json` and the parts it names) from a source that may
/// be hostile. Parts are content-addressed and immutable: those kept from an earlier sync in
/// `partsFolder` are read from there (checked again), only the others are downloaded, so after
/// a one-block edit a client fetches the index and the one part that changed.
struct SplitManifestFetch {
    let source: SyncSource
    let timeouts: NetworkTimeouts
    /// Where verified parts are kept (`<sha256>.json`) and looked for; nil: none are.
    let partsFolder: String?
    /// Whether parts downloaded now are written to `partsFolder` (not for a dry run).
    var writesParts = true

    /// What reading the parts cost: parts downloaded and their bytes.
    struct Fetched {
        var manifest: CourseManifest
        var downloadedParts = 0
        var downloadedBytes: UInt64 = 0
    }

    var indexShown: String { source.location(of: ManifestIndex.fileName) }

    /// The index's bytes, nil when the source has none (a publish from before the split form:
    /// the caller reads `manifest.json`). Refused past `maximumManifestSize`.
    func indexBytes() async throws(SyncError) -> [UInt8]? {
        let shown = indexShown
        switch source {
        case .folder(let path):
            switch ManifestLoader.readFile(path + "/" + ManifestIndex.fileName, atMost: UInt64(ManifestLoader.sizeLimit)) {
            case .missing: return nil
            case .tooLarge: throw .unsafeManifest(source: shown, reason: "index larger than \(ManifestLoader.shownLimit)")
            case .unreadable(let reason): throw .unreachable(source: shown, reason: "cannot be read: \(reason)")
            case .bytes(let bytes): return bytes
            }
        case .http(let base):
            let (data, response) = try await ManifestLoader.fetch(
                URLRequest(url: base.appendingPathComponent(ManifestIndex.fileName)), shown: shown, timeouts: timeouts)
            switch response?.statusCode ?? 0 {
            // Hosting that answers every unknown path with its home page (a single-page app's
            // fallback) sends HTML for a publish that has no index: only a JSON object can be
            // one. The origin serves manifest.json too, so reading it instead trusts no one new.
            case 200: return Self.isJSONObject(data) ? [UInt8](data) : nil
            // Not published in the split form (S3 answers 403 for a missing key without list rights).
            case 403, 404, 410: return nil
            case let status: throw .http(url: shown, status: status)
            }
        }
    }

    /// Parses the index and checks what it names before any part is read: each part's name is
    /// its sha256 (64 lowercase hex digits, so its path stays in `manifest/`), no part is
    /// larger than a manifest may be, and all of them together stay within the split limit
    /// (`ManifestIndex.clientRefusals`, which the builder checks its own index against).
    func index(from bytes: [UInt8]) throws(SyncError) -> ManifestIndex {
        let shown = indexShown
        let index: ManifestIndex
        do {
            index = try ManifestFile.decodeIndex(bytes, path: shown)
        } catch {
            throw .manifest(error)
        }
        // The index's own size was checked as it was read.
        if let refusal = index.clientRefusals(indexSize: 0).first {
            throw .unsafeManifest(source: shown, reason: refusal.file == ManifestIndex.fileName ? refusal.message : "\(refusal.file) \(refusal.message)")
        }
        return index
    }

    /// Whether the first byte that is not JSON whitespace opens an object.
    static func isJSONObject(_ data: Data) -> Bool {
        data.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
    }

    /// The manifest the index and its parts describe, each part from `partsFolder` when kept
    /// there, downloaded and checked otherwise. Nothing in `partsFolder` but verified parts.
    func manifest(_ index: ManifestIndex) async throws(SyncError) -> Fetched {
        if let partsFolder, writesParts {
            do {
                try FileManager.default.createDirectory(atPath: partsFolder, withIntermediateDirectories: true)
            } catch {
                throw .local(path: partsFolder, reason: "cannot create the folder")
            }
        }
        var parts: [ManifestPart] = []
        parts.reserveCapacity(index.parts.count)
        var downloaded = (count: 0, bytes: UInt64(0))
        for reference in index.parts {
            let shown = source.location(of: reference.path)
            var bytes = kept(reference)
            if bytes == nil {
                let fetched = try await fetch(reference, shown: shown)
                downloaded.count += 1
                downloaded.bytes += reference.size
                keep(fetched, as: reference)
                bytes = fetched
            }
            let part: ManifestPart
            do {
                part = try ManifestFile.decodePart(bytes ?? [], path: shown)
            } catch {
                throw .manifest(error)
            }
            guard part.blocks.count == reference.blocks, part.outline.count == reference.containers else {
                throw .unsafeManifest(
                    source: shown,
                    reason: "holds \(part.blocks.count) blocks and \(part.outline.count) outline entries; \(ManifestIndex.fileName) says \(reference.blocks) and \(reference.containers)")
            }
            parts.append(part)
        }
        return Fetched(manifest: ManifestSplit.assemble(index, parts: parts), downloadedParts: downloaded.count, downloadedBytes: downloaded.bytes)
    }

    /// A part kept from an earlier sync, when its bytes are still the ones named.
    func kept(_ reference: PartReference) -> [UInt8]? {
        guard let partsFolder else { return nil }
        let path = partsFolder + "/" + reference.sha256 + ".json"
        guard case .bytes(let bytes) = ManifestLoader.readFile(path, atMost: reference.size) else { return nil }
        guard UInt64(bytes.count) == reference.size, ManifestSplit.verify(bytes, as: reference) else {
            unlink(path)
            return nil
        }
        return bytes
    }

    /// Written before any index naming it is kept (`SplitManifestState.remember` syncs them).
    func keep(_ bytes: [UInt8], as reference: PartReference) {
        guard let partsFolder, writesParts else { return }
        try? DurableFile.replace(partsFolder + "/" + reference.sha256 + ".json", with: bytes, synced: false)
    }

    /// One part's bytes, refused past the size the index gives (streamed: never more held),
    /// short of it, or not hashing to its name.
    func fetch(_ reference: PartReference, shown: String) async throws(SyncError) -> [UInt8] {
        let bytes: [UInt8]
        switch source {
        case .folder(let path):
            switch ManifestLoader.readFile(path + "/" + reference.path, atMost: reference.size) {
            case .missing:
                throw .unreachable(source: shown, reason: "no such part, although \(ManifestIndex.fileName) names it")
            case .tooLarge(let size):
                throw .unsafeManifest(source: shown, reason: "part is \(size) bytes, the index says \(reference.size)")
            case .unreadable(let reason):
                throw .unreachable(source: shown, reason: "cannot be read: \(reason)")
            case .bytes(let read):
                bytes = read
            }
        case .http(let base):
            bytes = try await download(URLRequest(url: base.appendingPathComponent(reference.path)), reference: reference, shown: shown)
        }
        guard UInt64(bytes.count) == reference.size else {
            throw .unsafeManifest(source: shown, reason: "part is truncated: \(bytes.count) of the \(reference.size) bytes the index says")
        }
        guard ManifestSplit.verify(bytes, as: reference) else {
            throw .unsafeManifest(source: shown, reason: "part's bytes do not match the sha256 the index names")
        }
        return bytes
    }

    private func download(_ request: URLRequest, reference: PartReference, shown: String) async throws(SyncError) -> [UInt8] {
        do {
            let (data, response) = try await StreamingTransfer.fetch(request, limit: Int(reference.size), timeouts: timeouts)
            let status = response?.statusCode ?? 0
            guard status == 200 else { throw SyncError.http(url: shown, status: status) }
            return [UInt8](data)
        } catch let error as SyncError {
            throw error
        } catch TransferFailure.tooLarge {
            throw .unsafeManifest(source: shown, reason: "part is larger than the \(reference.size) bytes the index says; cut off")
        } catch let error as TransferFailure {
            throw .unreachable(source: shown, reason: "\(error)")
        } catch {
            throw .unreachable(source: shown, reason: error.localizedDescription)
        }
    }
}
