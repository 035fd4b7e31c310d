import Foundation
import FileSystem
import Manifest
import ZipArchive

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a manifest from a source, for `coursepack diff` and the sync plan.
public enum ManifestLoader {
    /// A server's manifest larger than this is refused, as soon as it is seen to be: a hostile
    /// or broken server cannot make a client hold more than this in memory. The builder checks
    /// its manifests against the same limit.
    public static var sizeLimit: Int { ManifestLimits.current.maximumFileSize }
    static var shownLimit: String { ManifestLimits.current.shownFileSize }

    /// The split form (`manifest-index.json` and its parts) when the source has it, else
    /// `manifest.json`; parts are read into memory, none kept.
    public static func load(_ source: SyncSource, timeouts: NetworkTimeouts = NetworkTimeouts()) async throws(SyncError) -> CourseManifest {
        let split = SplitManifestFetch(source: source, timeouts: timeouts, partsFolder: nil)
        if let indexBytes = try await split.indexBytes() {
            return try await split.manifest(split.index(from: indexBytes)).manifest
        }
        let shown = source.location(of: "manifest.json")
        let data: Data
        switch source {
        case .folder(let path):
            data = try readFolder(path, shown: shown)
        case .http(let url):
            let response: HTTPURLResponse?
            (data, response) = try await fetch(URLRequest(url: url.appendingPathComponent("manifest.json")), shown: shown, timeouts: timeouts)
            let status = response?.statusCode ?? 0
            guard status == 200 else { throw .http(url: shown, status: status) }
        }
        return try decode(data, shown: shown)
    }

    /// The body of a manifest request, streamed and refused once it passes `sizeLimit`.
    static func fetch(_ request: URLRequest, shown: String, timeouts: NetworkTimeouts) async throws(SyncError) -> (Data, HTTPURLResponse?) {
        do {
            return try await StreamingTransfer.fetch(request, limit: sizeLimit, timeouts: timeouts)
        } catch TransferFailure.tooLarge {
            throw .unsafeManifest(source: shown, reason: "manifest larger than \(shownLimit)")
        } catch let error as TransferFailure {
            throw .unreachable(source: shown, reason: "\(error)")
        } catch {
            throw .unreachable(source: shown, reason: error.localizedDescription)
        }
    }

    static func readFolder(_ path: String, shown: String) throws(SyncError) -> Data {
        switch readFile(path + "/manifest.json", atMost: UInt64(sizeLimit)) {
        case .missing: throw .unreachable(source: shown, reason: "no manifest.json there")
        case .tooLarge: throw .unsafeManifest(source: shown, reason: "manifest larger than \(shownLimit)")
        case .unreadable(let reason): throw .unreachable(source: shown, reason: "cannot be read: \(reason)")
        case .bytes(let bytes): return Data(bytes)
        }
    }

    enum BoundedRead {
        case missing
        case tooLarge(UInt64)
        case unreadable(String)
        case bytes([UInt8])
    }

    /// A file of a folder source (a manifest, an index or a part, or a kept part), read through one descriptor: a regular file
    /// only (a FIFO is not waited on), its size checked before anything is read, and never more
    /// than `limit` bytes held, however the file grows meanwhile.
    static func readFile(_ path: String, atMost limit: UInt64) -> BoundedRead {
        do {
            guard let bytes = try WholeFile.read(path, atMost: limit) else { return .missing }
            return .bytes(bytes)
        } catch {
            // The size now, for the message (the file may have grown past the limit as it was read).
            return error.errno == WholeFile.tooLargeErrno ? .tooLarge(FileStamp.of(path)?.size ?? limit) : .unreadable(error.description)
        }
    }


    /// A server's manifest from its bytes, parsed and checked as untrusted input the way a sync
    /// checks it before downloading anything (the fuzz target `FuzzManifest` drives this).
    public static func validated(_ data: Data, shown: String) throws(SyncError) -> CourseManifest {
        let manifest = try decode(data, shown: shown)
        try ManifestValidation.check(manifest, source: shown)
        return manifest
    }

    /// Parses a manifest from a source that may be hostile, within a size bound.
    static func decode(_ data: Data, shown: String) throws(SyncError) -> CourseManifest {
        guard data.count <= sizeLimit else { throw .unsafeManifest(source: shown, reason: "manifest larger than \(shownLimit)") }
        do {
            return try ManifestFile.decode(data, path: shown)
        } catch {
            throw .manifest(error)
        }
    }
}
