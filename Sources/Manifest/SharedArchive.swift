/// An archive every page of a course shares, listed once at the top of the manifest: the page
/// runtime (`runtime/<hash>.zip`, reached by pages as `../../runtime/<hash>/…`) and the search
/// index (`search/<hash>.zip`, holding `index.js`). A client unpacks `<kind>/<hash>.zip` into
/// `<kind>/<hash>/`; the name is the first 16 hex digits of the content hash.
public struct SharedArchive: Codable, Sendable, Equatable {
    /// What the device keeps once per course rather than once per page. A new kind is a new
    /// case here and a field of the manifest; builders and clients handle every kind alike.
    public enum Kind: String, CaseIterable, Sendable {
        case runtime
        case search

        /// The manifest's folder for this kind, also the archive path's first component.
        public var folder: String { rawValue }

        /// `<kind>/<first 16 hex digits of contentHash>.zip`: the name is the content.
        public func archivePath(contentHash: String) -> String {
            "\(folder)/\(contentHash.prefix(16)).zip"
        }
    }

    public var archive: String
    public var size: UInt64
    /// SHA-256 of the archive file, hex.
    public var sha256: String
    /// SHA-256 of what it holds (names and bytes), hex.
    public var contentHash: String
    /// What its installed folder holds, path → content key of the manifest's `files`, as for a
    /// block. Absent in manifests written before it existed.
    public var files: FileListing?
    /// Exact bytes of its installed folder.
    public var unpackedSize: UInt64?

    public init(archive: String, size: UInt64, sha256: String, contentHash: String) {
        self.archive = archive
        self.size = size
        self.sha256 = sha256
        self.contentHash = contentHash
    }

    enum CodingKeys: String, CodingKey {
        case archive, size, sha256
        case contentHash = "content_hash"
        case files
        case unpackedSize = "unpacked_size"
    }
}

public typealias RuntimeArchive = SharedArchive
public typealias SearchArchive = SharedArchive

extension CourseManifest {
    /// The manifest's shared archive of `kind`, nil when it lists none.
    public subscript(shared kind: SharedArchive.Kind) -> SharedArchive? {
        get {
            switch kind {
            case .runtime: runtime
            case .search: search
            }
        }
        set {
            switch kind {
            case .runtime: runtime = newValue
            case .search: search = newValue
            }
        }
    }

    /// Every shared archive the manifest lists, in `Kind` order.
    public var sharedArchives: [SharedArchive] {
        SharedArchive.Kind.allCases.compactMap { self[shared: $0] }
    }
}
