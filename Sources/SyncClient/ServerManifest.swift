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

    /// The server's manifest, validated. Over HTTP the request is conditional on the last
    /// one seen, so an unchanged course costs a 304. `remember` stores what was fetched; it is
    /// called only once the sync has used it.
    func fetchServerManifest(remember: Bool) async throws(SyncError) -> (CourseManifest, notModified: Bool, remember: @Sendable (_ stateFolder: String) -> Void) {
        let source = options.source
        let shown = source.location(of: "manifest.json")
        let cachePath = Self.cachePath(stateFolder)
        let validatorsPath = Self.validatorsPath(stateFolder)
        var data: Data
        var notModified = false
        var store: @Sendable (String) -> Void = { _ in }
        switch source {
        case .folder(let path):
            data = try ManifestLoader.readFolder(path, shown: shown)
        case .http(let base):
            var request = URLRequest(url: base.appendingPathComponent("manifest.json"))
            request.cachePolicy = .reloadIgnoringLocalCacheData
            let cached = FileManager.default.contents(atPath: cachePath)
            let validators = FileManager.default.contents(atPath: validatorsPath).flatMap { try? JSONDecoder().decode(Validators.self, from: $0) }
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
                }
            case let status:
                throw .http(url: shown, status: status)
            }
        }
        let manifest = try ManifestLoader.validated(data, shown: shown)
        if !remember { store = { _ in } }
        return (manifest, notModified, store)
    }

    static func cachePath(_ stateFolder: String) -> String { stateFolder + "/server-manifest.json" }

    /// The server's manifest as last fetched over HTTP, kept for a conditional request.
    public static func cachedManifestPath(target: String) -> String { cachePath(stateFolder(of: target)) }
    static func validatorsPath(_ stateFolder: String) -> String { stateFolder + "/validators.json" }

    /// The server's manifest, validated, fetched conditionally on what this target last saw;
    /// nothing is written. Hand it to `sync(fetched:)`, which remembers it once used, so a
    /// caller that must read the manifest first (to know the course) costs no second request.
    public func fetchManifest() async throws(SyncError) -> FetchedManifest {
        let (manifest, notModified, remember) = try await fetchServerManifest(remember: true)
        return FetchedManifest(manifest: manifest, notModified: notModified, remember: remember)
    }
}

public struct FetchedManifest: Sendable {
    public let manifest: CourseManifest
    /// The server answered 304: `manifest` is the one cached from the last sync.
    public let notModified: Bool
    let remember: @Sendable (_ stateFolder: String) -> Void
}
