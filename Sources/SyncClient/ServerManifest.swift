import FileSystem
import Foundation
import Manifest

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SyncClient {
    /// The server's manifest, validated as untrusted input, without touching any local folder.
    public static func serverManifest(_ source: SyncSource, timeouts: NetworkTimeouts = NetworkTimeouts()) async throws(SyncError) -> CourseManifest {
        let manifest = try await ManifestLoader.load(source, timeouts: timeouts)
        try ManifestValidation.check(manifest, source: source.location(of: "manifest.json"))
        return manifest
    }

    struct Validators: Codable {
        var etag: String?
        var lastModified: String?
    }

    /// What fetching the server's manifest gave: the manifest, nil when its bytes hash to the
    /// fingerprint the caller knew (then nothing was parsed); `remember` stores what was
    /// fetched, called only once the sync has used it.
    struct ServerFetch {
        var manifest: CourseManifest?
        var notModified: Bool
        /// SHA-256 of the bytes the server's manifest is read from: `manifest-index.json`'s in
        /// the split form, else `manifest.json`'s.
        var fingerprint: String
        var remember: @Sendable (_ stateFolder: String) -> Void
    }

    /// The server's manifest, validated. Over HTTP the request is conditional on the last
    /// one seen, so an unchanged course costs a 304. When its bytes hash to `known`, it is not
    /// parsed (`manifest` nil).
    func fetchServerManifest(remember: Bool, unless known: String? = nil) async throws(SyncError) -> ServerFetch {
        if let split = try await fetchSplitManifest(remember: remember, unless: known) { return split }
        let source = options.source
        let shown = source.location(of: "manifest.json")
        let cachePath = Self.cachePath(stateFolder)
        let validatorsPath = Self.validatorsPath(stateFolder)
        var data: Data
        var notModified = false
        // Read in this form now: a split form kept from before is stale, its parts too.
        var store: @Sendable (String) -> Void = Self.forgettingSplitForm
        switch source {
        case .folder(let path):
            data = try ManifestLoader.readFolder(path, shown: shown)
        case .http(let base):
            var request = URLRequest(url: base.appendingPathComponent("manifest.json"))
            request.cachePolicy = .reloadIgnoringLocalCacheData
            let cached = WholeFile.readIfUsable(cachePath, atMost: UInt64(ManifestLoader.sizeLimit)).map { Data($0) }
            let validators = WholeFile.readIfUsable(validatorsPath, atMost: WholeFile.stateLimit).flatMap { try? JSONDecoder().decode(Validators.self, from: Data($0)) }
            if cached != nil, let validators {
                if let etag = validators.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
                if let modified = validators.lastModified { request.setValue(modified, forHTTPHeaderField: "If-Modified-Since") }
            }
            let http: HTTPURLResponse?
            (data, http) = try await ManifestLoader.fetch(request, shown: shown, timeouts: options.timeouts)
            switch http?.statusCode ?? 0 {
            case 304:
                guard let cached else { throw .http(url: shown, status: 304) }
                data = cached
                notModified = true
            case 200:
                let fresh = Validators(etag: http?.value(forHTTPHeaderField: "ETag"), lastModified: http?.value(forHTTPHeaderField: "Last-Modified"))
                let body = data
                store = { folder in
                    try? body.write(to: URL(fileURLWithPath: Self.cachePath(folder)), options: .atomic)
                    if let encoded = try? JSONEncoder().encode(fresh) { try? encoded.write(to: URL(fileURLWithPath: Self.validatorsPath(folder)), options: .atomic) }
                    Self.forgettingSplitForm(folder)
                }
            case let status:
                throw .http(url: shown, status: status)
            }
        }
        let fingerprint = SHA256Hex.of(data)
        if fingerprint == known { return ServerFetch(manifest: nil, notModified: true, fingerprint: fingerprint, remember: Self.forgetting) }
        let manifest = try ManifestLoader.validated(data, shown: shown)
        return ServerFetch(manifest: manifest, notModified: notModified, fingerprint: fingerprint, remember: remember ? store : Self.forgetting)
    }

    /// The split form when the source publishes it (see `SplitManifestFetch`): the index is
    /// fetched whole (it is small), the parts this target keeps are not fetched again. Nil when
    /// the source has no index. "Not modified" when the index's bytes are the ones kept.
    func fetchSplitManifest(remember: Bool, unless known: String?) async throws(SyncError) -> ServerFetch? {
        let partsFrom = Self.partsFolder(stateFolder)
        var split = SplitManifestFetch(source: options.source, timeouts: options.timeouts, partsFolder: partsFrom)
        split.writesParts = remember
        guard let indexBytes = try await split.indexBytes() else { return nil }
        let fingerprint = SHA256Hex.of(indexBytes)
        let kept = WholeFile.readIfUsable(Self.indexPath(stateFolder), atMost: UInt64(ManifestLoader.sizeLimit))
        if fingerprint == known { return ServerFetch(manifest: nil, notModified: kept == indexBytes, fingerprint: fingerprint, remember: Self.forgetting) }
        let index = try split.index(from: indexBytes)
        let fetched = try await split.manifest(index)
        try ManifestValidation.check(fetched.manifest, source: split.indexShown)
        let perFile = options.durability == .perFile
        let store: @Sendable (String) -> Void = { folder in
            SplitManifestState.remember(indexBytes, index: index, partsFrom: partsFrom, stateFolder: folder, perFile: perFile)
        }
        return ServerFetch(manifest: fetched.manifest, notModified: kept == indexBytes, fingerprint: fingerprint, remember: remember ? store : Self.forgetting)
    }

    static let forgetting: @Sendable (_ stateFolder: String) -> Void = { _ in }

    /// The kept index first (so no later sync trusts parts that are going), then the parts.
    static let forgettingSplitForm: @Sendable (_ stateFolder: String) -> Void = { folder in
        unlink(indexPath(folder))
        try? FileManager.default.removeItem(atPath: partsFolder(folder))
    }

    static func partsFolder(_ stateFolder: String) -> String { stateFolder + "/parts" }
    static func indexPath(_ stateFolder: String) -> String { stateFolder + "/" + ManifestIndex.fileName }

    static func cachePath(_ stateFolder: String) -> String { stateFolder + "/server-manifest.json" }

    /// The server's manifest as last fetched over HTTP, kept for a conditional request.
    public static func cachedManifestPath(target: String) -> String { cachePath(stateFolder(of: target)) }
    static func validatorsPath(_ stateFolder: String) -> String { stateFolder + "/validators.json" }

    /// The server's manifest, validated, fetched conditionally on what this target last saw;
    /// nothing is written. Hand it to `sync(fetched:)`, which remembers it once used, so a
    /// caller that must read the manifest first (to know the course) costs no second request.
    public func fetchManifest() async throws(SyncError) -> FetchedManifest {
        let fetched = try await fetchServerManifest(remember: true)
        guard let manifest = fetched.manifest else { throw .local(path: stateFolder, reason: "no manifest was read") }
        return FetchedManifest(manifest: manifest, notModified: fetched.notModified, fingerprint: fetched.fingerprint, remember: fetched.remember)
    }

    /// Nil when the server's manifest is still the one whose fingerprint is `known` (a sync
    /// that left the course whole recorded it, see `SettledSync`): nothing is parsed, so a
    /// no-op sync of a large course costs one small request. Otherwise as `fetchManifest()`.
    public func fetchManifest(unlessFingerprint known: String) async throws(SyncError) -> FetchedManifest? {
        let fetched = try await fetchServerManifest(remember: true, unless: known)
        guard let manifest = fetched.manifest else { return nil }
        return FetchedManifest(manifest: manifest, notModified: fetched.notModified, fingerprint: fetched.fingerprint, remember: fetched.remember)
    }
}

public struct FetchedManifest: Sendable {
    public let manifest: CourseManifest
    /// The server answered 304: `manifest` is the one cached from the last sync.
    public let notModified: Bool
    /// SHA-256 of the bytes `manifest` was read from (the split form's index, or manifest.json).
    public let fingerprint: String
    let remember: @Sendable (_ stateFolder: String) -> Void
}
