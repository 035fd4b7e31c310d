import Manifest
import SyncClient

/// What installing one folder (a block, the runtime, the search index) adds to a target's disk,
/// known before anything is downloaded: the store contents it lists (each counted once over
/// the whole target, however many folders list it) and what is its own (its folders, its
/// inventory, and the files of a folder installed from an archive).
struct FolderCost: Sendable, Equatable {
    /// Content key → bytes.
    var contents: [String: UInt64] = [:]
    var own: UInt64 = 0

    /// Bytes an inventory line takes beyond its name (CRC, size, tabs), and its header.
    static let inventoryLine: UInt64 = 24
    static let inventoryHeader: UInt64 = 120

    /// From a listing and the manifest's contents.
    init(listing: FileListing, files: [String: CourseFile]) {
        for key in listing.values { contents[key] = files[key]?.size ?? 0 }
        own = Self.folders(listing.keys) * DiskUsage.folderBytes + Self.inventoryBytes(listing.keys)
    }

    /// A folder installed from an archive: its files' bytes are its own.
    init(names: [String], bytes: UInt64) {
        own = bytes + Self.folders(names) * DiskUsage.folderBytes + Self.inventoryBytes(names)
    }

    init() {}

    /// A block or shared folder as the server offers it: by its listing, or (a manifest
    /// without contents) by its exact unpacked size or else its archive's size.
    init(offered block: BlockEntry, files: [String: CourseFile]?) {
        if let listing = block.files, let files {
            self.init(listing: listing, files: files)
        } else {
            self.init(names: [], bytes: block.unpackedSize ?? block.size ?? 0)
            own += DiskUsage.folderBytes
        }
    }

    /// The folder itself and each distinct subfolder of `names`.
    static func folders<Names: Sequence<String>>(_ names: Names) -> UInt64 {
        var folders = Set<Substring>()
        for name in names {
            var rest = Substring(name)
            while let slash = rest.lastIndex(of: "/") {
                rest = rest[..<slash]
                folders.insert(rest)
            }
        }
        return UInt64(folders.count + 1)
    }

    static func inventoryBytes<Names: Sequence<String>>(_ names: Names) -> UInt64 {
        names.reduce(inventoryHeader) { $0 + UInt64($1.utf8.count) + inventoryLine }
    }
}
