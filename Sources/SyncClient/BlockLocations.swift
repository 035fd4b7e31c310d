#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem
import Foundation
import Manifest

/// Where one block of an installed course is, found without decoding the course's manifest:
/// opening a page, recording an answer and writing its state each need one block, and at
/// 92,000 blocks decoding the local manifest took 5.8 s every time (an answer posted to
/// `serve` decoded it twice). A sync keeps every block's location in the course's state folder
/// (`block-locations.tsv`) when it writes the local manifest, and a lookup that finds no table
/// for it makes one; the table is headed by the SHA-256 of the manifest's bytes: a lookup hashes the manifest (a tenth of a second at that
/// size) and uses the table only while it describes those very bytes, so no stamp or clock
/// can make it answer for another manifest.
public enum BlockLocations {
    public static let fileName = "block-locations.tsv"
    static let header = "coursepack-block-locations-v1 "
    /// The last line, after every block's; no usage id is `end`.
    static let trailer = Array("end\n".utf8)

    /// A block as the local manifest lists it.
    public struct Location: Equatable, Sendable {
        public var offline: Bool
        /// The folder its archive unpacks into, relative to the course's root; nil without one.
        public var folder: String?
        public var contentHash: String?
        /// Why it needs the network, for an online-only block.
        public var reason: String?

        public init(offline: Bool, folder: String?, contentHash: String?, reason: String?) {
            (self.offline, self.folder, self.contentHash, self.reason) = (offline, folder, contentHash, reason)
        }

        /// The block's page on this device (`<folder>/index.html` under `courseRoot`): nil for an
        /// online-only block, or an offline one whose folder is not installed.
        public func installedPage(courseRoot: String) -> String? {
            guard offline, let folder else { return nil }
            let page = courseRoot + "/" + folder + "/index.html"
            return FileManager.default.fileExists(atPath: page) ? page : nil
        }
    }

    /// The block `usageID` of the course at `courseRoot`; nil when the course has no readable
    /// local manifest or it does not list the block.
    public static func location(of usageID: String, courseRoot: String) -> Location? {
        // Hashed a chunk at a time: the 265 MB of a 92,000-block manifest are not held for it.
        if let streamed = try? SHA256Hex.ofFile(courseRoot + "/manifest.json"),
            let kept = try? WholeFile.read(tablePath(courseRoot), atMost: WholeFile.stateLimit), let found = lookUp(usageID, in: kept, manifestSHA256: streamed)
        {
            return found
        }
        guard let bytes = try? PublishedManifest.readFile(courseRoot + "/manifest.json"),
            let manifest = try? ManifestFile.decode(Data(bytes), path: courseRoot + "/manifest.json")
        else { return nil }
        let digest = SHA256Hex.of(bytes)
        save(manifest, bytes: bytes, courseRoot: courseRoot, digest: digest)
        return manifest.blocks.first { $0.usageID == usageID }.map(location)
    }

    /// Keeps the table of `manifest`, whose bytes the course's `manifest.json` now holds. A
    /// cache: one that cannot be written is made again by the next lookup.
    public static func save(_ manifest: CourseManifest, bytes: [UInt8], courseRoot: String, digest: String? = nil) {
        guard let made = encode(manifest, manifestSHA256: digest ?? SHA256Hex.of(bytes)) else {
            unlink(tablePath(courseRoot))
            return
        }
        try? DurableFile.replace(tablePath(courseRoot), with: made, synced: false)
    }

    static func tablePath(_ courseRoot: String) -> String { SyncClient.stateFolder(of: courseRoot) + "/" + fileName }

    static func location(_ block: BlockEntry) -> Location {
        Location(
            offline: block.isOffline, folder: block.isOffline ? block.archive.flatMap(ArchivePath.installFolder) : nil,
            contentHash: block.contentHash.flatMap { $0.isEmpty ? nil : $0 }, reason: block.reason.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The table: the header and the manifest's SHA-256, then a line per block (usage id,
    /// offline, folder, content hash, reason, separated by tabs). Nil when a field holds a tab,
    /// a line break or a backslash (a hostile server's names): that course is always decoded.
    static func encode(_ manifest: CourseManifest, manifestSHA256: String) -> [UInt8]? {
        var bytes = Array((header + manifestSHA256 + "\n").utf8)
        bytes.reserveCapacity(manifest.blocks.count * 160)
        for block in manifest.blocks {
            let found = location(block)
            let fields = [block.usageID, found.offline ? "1" : "0", found.folder ?? "", found.contentHash ?? "", found.reason ?? ""]
            guard fields.allSatisfy({ !$0.utf8.contains { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x5C } }) else { return nil }
            bytes += fields.joined(separator: "\t").utf8
            bytes.append(0x0A)
        }
        bytes += trailer
        return bytes
    }

    /// `.some(nil)` when the table describes the manifest and does not list the block; nil when
    /// it describes another manifest or cannot be read.
    static func lookUp(_ usageID: String, in table: [UInt8], manifestSHA256: String) -> Location?? {
        let head = Array((header + manifestSHA256 + "\n").utf8)
        // A table cut short (it is written without a sync, and a power cut may keep part of it)
        // has lost its last line: it is not believed.
        guard table.count >= head.count + trailer.count, table[..<head.count].elementsEqual(head), table.suffix(trailer.count).elementsEqual(trailer)
        else { return nil }
        guard !usageID.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A }) else { return .some(nil) }
        let needle = [0x0A] + Array(usageID.utf8) + [0x09]
        // From the header's line break: every line, the first one included, follows one.
        let start = head.count - 1
        let at: Int? = table.withUnsafeBufferPointer { haystack in
            needle.withUnsafeBufferPointer { wanted in
                guard let base = haystack.baseAddress, let sought = wanted.baseAddress else { return nil }
                var position = start
                let last = haystack.count - wanted.count
                while position <= last {
                    // Each line break starts a line; a line whose first field is the id matches.
                    if haystack[position] == 0x0A, memcmp(base + position, sought, wanted.count) == 0 { return position }
                    position += 1
                }
                return nil
            }
        }
        guard let at else { return .some(nil) }
        let lineStart = at + needle.count
        let lineEnd = table[lineStart...].firstIndex(of: 0x0A) ?? table.count
        let fields = table[lineStart..<lineEnd].split(separator: 0x09, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 4, fields[0] == "1" || fields[0] == "0" else { return nil }
        return .some(Location(
            offline: fields[0] == "1", folder: fields[1].isEmpty ? nil : fields[1], contentHash: fields[2].isEmpty ? nil : fields[2],
            reason: fields[3].isEmpty ? nil : fields[3]))
    }
}
