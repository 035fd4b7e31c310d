import Foundation
import Manifest
import ZipArchive

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a published course comes from: an `http(s)://` base URL or a local published folder.
public enum SyncSource: Sendable, Equatable, CustomStringConvertible {
    case http(URL)
    case folder(String)

    /// A URL when `text` starts with http:// or https://, a folder otherwise. A manifest file
    /// (`…/manifest.json`) stands for the folder or URL that holds it.
    public init(_ text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://"), var url = URL(string: text) {
            if url.lastPathComponent == "manifest.json" { url.deleteLastPathComponent() }
            self = .http(url)
        } else {
            self = .folder(text.hasSuffix("/manifest.json") ? String(text.dropLast("/manifest.json".count)) : text)
        }
    }

    public var description: String {
        switch self {
        case .http(let url): return url.absoluteString
        case .folder(let path): return path
        }
    }

    /// Where `relative` (a manifest's archive path, already validated) lives in this source.
    func location(of relative: String) -> String {
        switch self {
        case .http(let url): return url.appendingPathComponent(relative).absoluteString
        case .folder(let path): return path + "/" + relative
        }
    }
}

public enum SyncError: Error, Equatable, CustomStringConvertible {
    case unreachable(source: String, reason: String)
    case http(url: String, status: Int)
    case manifest(ManifestError)
    case unsafeManifest(source: String, reason: String)
    case verification(archive: String, reason: String)
    case local(path: String, reason: String)
    /// The target holds another course than the source offers (and replacing it was not asked).
    case otherCourse(target: String, installed: String, offered: String)
    /// Unpacking the archive would take the sync past its budget of unpacked bytes.
    case unpackBudget(archive: String, limit: UInt64)

    public var description: String {
        switch self {
        case .unreachable(let source, let reason): return "\(source): cannot be reached: \(reason)"
        case .http(let url, let status): return "\(url): the server answered HTTP \(status)"
        case .manifest(let error): return "\(error)"
        case .unsafeManifest(let source, let reason): return "\(source): refused: \(reason)"
        case .verification(let archive, let reason): return "\(archive): \(reason)"
        case .local(let path, let reason): return "\(path): \(reason)"
        case .otherCourse(let target, let installed, let offered):
            return "\(target) holds course \(installed), the source offers \(offered): refusing to replace it; nothing was changed (--replace-course replaces it)"
        case .unpackBudget(let archive, let limit):
            return "\(archive): not unpacked, the sync would unpack more than its budget of \(limit) bytes (--max-unpacked-bytes); the installed version is kept"
        }
    }
}

/// Reads a manifest from a source, for `coursepack diff` and the sync plan.
public enum ManifestLoader {
    /// A server's manifest larger than this is refused, as soon as it is seen to be: a hostile
    /// or broken server cannot make a client hold more than this in memory. The builder checks
    /// its manifests against the same limit.
    public static var sizeLimit: Int { ArchiveLimits.current.maximumManifestSize }
    private static var shownLimit: String { sizeLimit % (1 << 20) == 0 ? "\(sizeLimit >> 20) MiB" : "\(sizeLimit) bytes" }

    public static func load(_ source: SyncSource, timeouts: NetworkTimeouts = NetworkTimeouts()) async throws(SyncError) -> CourseManifest {
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
        let file = path + "/manifest.json"
        var info = stat()
        if stat(file, &info) == 0, info.st_size > sizeLimit {
            throw .unsafeManifest(source: shown, reason: "manifest larger than \(shownLimit)")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw .unreachable(source: shown, reason: "no manifest.json there")
        }
        return data
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
