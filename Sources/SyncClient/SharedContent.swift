import Manifest

/// Content a course folder keeps once, however many of its pages use it: the page runtime and
/// the search index, each listed once at the top of the manifest. A sync plans, downloads,
/// verifies and installs each as if it were one more block (`<kind>/<hash>.zip` unpacks into
/// `<kind>/<hash>/`), so it gets every guarantee a block gets; reconciliation, the budget and
/// `status` treat every kind alike. A new kind is one more case here, not one more copy.
public struct SharedContent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case runtime
        case search

        /// Where the manifest lists it.
        public var field: WritableKeyPath<CourseManifest, SharedArchive?> & Sendable {
            switch self {
            case .runtime: return \.runtime
            case .search: return \.search
            }
        }

        /// As messages name it.
        var shownName: String {
            switch self {
            case .runtime: return "the runtime archive"
            case .search: return "the search index"
            }
        }

        var displayName: String {
            switch self {
            case .runtime: return "page runtime"
            case .search: return "search index"
            }
        }
    }

    public let kind: Kind
    public let archive: SharedArchive

    public init(_ kind: Kind, _ archive: SharedArchive) {
        self.kind = kind
        self.archive = archive
    }

    /// What the manifest lists, in kind order.
    public static func all(in manifest: CourseManifest) -> [SharedContent] {
        Kind.allCases.compactMap { kind in manifest[keyPath: kind.field].map { SharedContent(kind, $0) } }
    }

    /// The id a sync plans and installs it under, beside the blocks' usage ids.
    public var usageID: String { kind.rawValue + ":" + archive.archive }

    /// The folder it unpacks into, relative to the course folder.
    public var installFolder: String? { ArchivePath.installFolder(of: archive.archive) }

    /// The kind of a planned entry that stands for shared content (see `blockEntry`), if it is one.
    static func kind(ofPlanned entry: BlockEntry) -> Kind? {
        guard let kind = Kind(rawValue: entry.type), entry.usageID.hasPrefix(kind.rawValue + ":") else { return nil }
        return kind
    }

    /// The block-like entry a sync plans and installs.
    public func blockEntry(publishedAt: String) -> BlockEntry {
        var entry = BlockEntry(
            usageID: usageID, type: kind.rawValue, displayName: kind.displayName, parents: [], archive: archive.archive,
            size: archive.size, sha256: archive.sha256, contentHash: archive.contentHash, lastModified: publishedAt)
        entry.files = archive.files
        entry.unpackedSize = archive.unpackedSize
        return entry
    }

    /// The manifest with its shared content appended to its blocks, as a sync plans them.
    static func asBlocks(_ manifest: CourseManifest) -> CourseManifest {
        var copy = manifest
        copy.blocks += all(in: manifest).map { $0.blockEntry(publishedAt: manifest.publishedAt) }
        return copy
    }
}
