import Foundation

/// The manifest's one byte layout, written directly: two-space indentation, `"key" : value`,
/// keys in sorted order, `/` and non-ASCII unescaped, absent optionals left out. Identical
/// manifests are identical bytes on every platform and toolchain, and writing a manifest of
/// thousands of blocks takes a few milliseconds instead of a generic encoder's tens.
/// (The layout is the one Foundation's pretty-printing, sorted-keys JSONEncoder produced for
/// schema 1 on Linux, so manifests written before stay byte-identical; a test holds the two
/// together.)
enum CanonicalJSON {
    static func encode(_ manifest: CourseManifest) -> [UInt8] {
        encode(manifest, blockEntries: nil)
    }

    /// With `blockEntries`, the bytes of the blocks array are those runs (each what
    /// `blockEntries(inPart:)` finds in a part holding the next entries, in order) rather than
    /// the entries encoded again: a part holds its entries at the depth `manifest.json` does, so
    /// they are the same bytes, and a rebuild that has just encoded every part need not encode
    /// every entry a second time (nor a third for an interim manifest).
    static func encode(_ manifest: CourseManifest, blockEntries: [ArraySlice<UInt8>]?) -> [UInt8] {
        var out = Writer()
        // Generous: capacity never written is never touched, while one byte too few copies the
        // whole document into an allocation twice its size (at 3,000 blocks, 4 MB for 8 MB).
        let blockBytes = blockEntries?.reduce(0) { $0 + $1.count } ?? manifest.blocks.count * 1024
        let outline = manifest.outline ?? []
        let rest = (manifest.files?.count ?? 0) * 256 + outline.count * 384 + outline.reduce(0) { $0 + $1.children.count * 160 }
        out.bytes.reserveCapacity(4096 + blockBytes + rest)
        var object = out.beginObject(level: 0)
        out.key("blocks", in: &object)
        out.beginArray()
        if let blockEntries {
            for (index, run) in blockEntries.enumerated() {
                if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
                out.bytes.append(contentsOf: run)
            }
        } else {
            for (index, block) in manifest.blocks.enumerated() {
                out.element(index, level: 1)
                encode(block, into: &out, level: 2)
            }
        }
        out.endArray(count: manifest.blocks.count, level: 1)
        out.key("course_id", in: &object)
        out.string(manifest.courseID)
        if let files = manifest.files {
            out.key("files", in: &object)
            encode(files, into: &out)
        }
        out.key("generator", in: &object)
        out.string(manifest.generator)
        if let outline = manifest.outline {
            out.key("outline", in: &object)
            encode(outline, into: &out)
        }
        out.key("published_at", in: &object)
        out.string(manifest.publishedAt)
        if let runtime = manifest.runtime {
            out.key("runtime", in: &object)
            encode(runtime, into: &out)
        }
        out.key("schema_version", in: &object)
        out.integer(Int64(manifest.schemaVersion))
        if let search = manifest.search {
            out.key("search", in: &object)
            encode(search, into: &out)
        }
        out.endObject(object)
        out.bytes.append(UInt8(ascii: "\n"))
        return out.bytes
    }

    /// A part of a split manifest (`ManifestPart`), in the manifest's layout.
    static func encode(_ part: ManifestPart) -> [UInt8] { encodeMeasuring(part).bytes }

    /// A part's bytes, and how many of them its block entries take (each as `manifest.json`
    /// holds it too: at the same depth, so the same bytes).
    static func encodeMeasuring(_ part: ManifestPart) -> (bytes: [UInt8], entryBytes: Int) {
        var entryBytes = 0
        var out = Writer()
        out.bytes.reserveCapacity(256 + part.blocks.count * 1024 + part.outline.count * 256)
        var object = out.beginObject(level: 0)
        out.key("blocks", in: &object)
        out.beginArray()
        for (index, block) in part.blocks.enumerated() {
            out.element(index, level: 1)
            let start = out.bytes.count
            encode(block, into: &out, level: 2)
            entryBytes += out.bytes.count - start
        }
        out.endArray(count: part.blocks.count, level: 1)
        out.key("files", in: &object)
        encode(part.files, into: &out)
        out.key("outline", in: &object)
        encode(part.outline, into: &out)
        out.endObject(object)
        out.bytes.append(UInt8(ascii: "\n"))
        return (out.bytes, entryBytes)
    }

    /// The bytes of a part's blocks array between its `[` and the newline before its `]`: each
    /// entry with the separator and indentation before it, as `manifest.json` holds them. Nil
    /// when the part holds no blocks or is not in this layout.
    static func blockEntries(inPart bytes: [UInt8]) -> Range<Int>? {
        countedBlockEntries(inPart: bytes)?.range
    }

    private static let blocksOpening = Array("{\n  \"blocks\" : [".utf8)

    /// Where a part's block entries lie (`blockEntries(inPart:)`) and how many there are. A JSON
    /// string holds no raw newline, so lines tell the layout: each entry starts on one of its
    /// own, indented four spaces, with its `{` (anything nested in it is indented further),
    /// and the first line of exactly two spaces and `]` ends the array.
    static func countedBlockEntries(inPart bytes: [UInt8]) -> (range: Range<Int>, count: Int)? {
        let opening = blocksOpening
        guard bytes.count > opening.count + 1, bytes.starts(with: opening), bytes[opening.count] == UInt8(ascii: "\n"),
            bytes[opening.count + 1] == UInt8(ascii: " ")
        else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> (Range<Int>, Int)? in
            guard let base = buffer.baseAddress else { return nil }
            let (space, open, close) = (UInt8(ascii: " "), UInt8(ascii: "{"), UInt8(ascii: "]"))
            var count = 0
            var position = opening.count
            // memchr from line to line: at 100,000 blocks a build scans a quarter of a gigabyte.
            while position < buffer.count, let found = memchr(base + position, 0x0A, buffer.count - position) {
                let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                let left = buffer.count - newline
                if left >= 4, base[newline + 1] == space, base[newline + 2] == space {
                    if base[newline + 3] == close { return (opening.count..<newline, count) }
                    if left >= 6, base[newline + 3] == space, base[newline + 4] == space, base[newline + 5] == open { count += 1 }
                }
                position = newline + 1
            }
            return nil
        }
    }

    /// Whether the blocks array of `manifest` (a `manifest.json`'s bytes) is exactly `runs`, as
    /// `encode(_:blockEntries:)` joins them: the same entries, at the same depth, in order.
    static func blocksArray(of manifest: [UInt8], isMadeOf runs: [ArraySlice<UInt8>]) -> Bool {
        let opening = blocksOpening
        guard manifest.starts(with: opening) else { return false }
        return manifest.withUnsafeBufferPointer { whole in
            guard let base = whole.baseAddress else { return false }
            var position = opening.count
            for (index, run) in runs.enumerated() {
                if index > 0 {
                    guard position < whole.count, base[position] == UInt8(ascii: ",") else { return false }
                    position += 1
                }
                guard whole.count - position >= run.count,
                    run.withUnsafeBufferPointer({ $0.baseAddress.map { memcmp(base + position, $0, run.count) == 0 } ?? true })
                else { return false }
                position += run.count
            }
            let closing = Array("\n  ]".utf8)
            return whole.count - position >= closing.count && memcmp(base + position, closing, closing.count) == 0
        }
    }

    /// The index of a split manifest (`ManifestIndex`), in the manifest's layout.
    static func encode(_ index: ManifestIndex) -> [UInt8] {
        var out = Writer()
        var object = out.beginObject(level: 0)
        out.key("course_id", in: &object)
        out.string(index.courseID)
        if let files = index.files {
            out.key("files", in: &object)
            encode(files, into: &out)
        }
        out.key("generator", in: &object)
        out.string(index.generator)
        out.key("parts", in: &object)
        out.beginArray()
        for (position, part) in index.parts.enumerated() {
            out.element(position, level: 1)
            var inner = out.beginObject(level: 2)
            out.key("blocks", in: &inner)
            out.integer(Int64(part.blocks))
            out.key("containers", in: &inner)
            out.integer(Int64(part.containers))
            out.key("sha256", in: &inner)
            out.string(part.sha256)
            out.key("size", in: &inner)
            out.unsigned(part.size)
            out.endObject(inner)
        }
        out.endArray(count: index.parts.count, level: 1)
        out.key("published_at", in: &object)
        out.string(index.publishedAt)
        if let runtime = index.runtime {
            out.key("runtime", in: &object)
            encode(runtime, into: &out)
        }
        out.key("schema_version", in: &object)
        out.integer(Int64(index.schemaVersion))
        if let search = index.search {
            out.key("search", in: &object)
            encode(search, into: &out)
        }
        out.endObject(object)
        out.bytes.append(UInt8(ascii: "\n"))
        return out.bytes
    }

    private static func encode(_ outline: [OutlineEntry], into out: inout Writer) {
        out.beginArray()
        for (index, entry) in outline.enumerated() {
            out.element(index, level: 1)
            var inner = out.beginObject(level: 2)
            out.key("children", in: &inner)
            out.strings(entry.children, level: 3)
            if let displayName = entry.displayName { out.key("display_name", in: &inner); out.string(displayName) }
            out.key("type", in: &inner)
            out.string(entry.type)
            out.key("usage_id", in: &inner)
            out.string(entry.usageID)
            out.endObject(inner)
        }
        out.endArray(count: outline.count, level: 1)
    }

    /// A shared archive (runtime, search index), one level below the top.
    private static func encode(_ shared: SharedArchive, into out: inout Writer) {
        var inner = out.beginObject(level: 1)
        out.key("archive", in: &inner)
        out.string(shared.archive)
        out.key("content_hash", in: &inner)
        out.string(shared.contentHash)
        if let files = shared.files { out.key("files", in: &inner); encode(files, into: &out, level: 2) }
        out.key("sha256", in: &inner)
        out.string(shared.sha256)
        out.key("size", in: &inner)
        out.unsigned(shared.size)
        if let unpackedSize = shared.unpackedSize { out.key("unpacked_size", in: &inner); out.unsigned(unpackedSize) }
        out.endObject(inner)
    }

    /// The top-level contents, by key in byte order, one level below the top.
    private static func encode(_ files: [String: CourseFile], into out: inout Writer) {
        var object = out.beginObject(level: 1)
        for sha256 in files.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            guard let file = files[sha256] else { continue }
            out.dynamicKey(sha256, in: &object)
            var inner = out.beginObject(level: 2)
            out.key("compressed_size", in: &inner)
            out.unsigned(file.compressedSize)
            if let encoding = file.encoding { out.key("encoding", in: &inner); out.string(encoding.rawValue) }
            out.key("size", in: &inner)
            out.unsigned(file.size)
            out.endObject(inner)
        }
        out.endObject(object)
    }

    /// A folder's listing, paths in byte order.
    private static func encode(_ listing: FileListing, into out: inout Writer, level: Int) {
        var inner = out.beginObject(level: level)
        for path in listing.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out.dynamicKey(path, in: &inner)
            out.string(listing[path] ?? "")
        }
        out.endObject(inner)
    }

    /// Keys in the byte order `sortedKeys` gives: `offline` < `offline_download`, `reason` < `requires_network`.
    private static func encode(_ block: BlockEntry, into out: inout Writer, level: Int) {
        var object = out.beginObject(level: level)
        if let archive = block.archive { out.key("archive", in: &object); out.string(archive) }
        if let contentHash = block.contentHash { out.key("content_hash", in: &object); out.string(contentHash) }
        if let displayName = block.displayName { out.key("display_name", in: &object); out.string(displayName) }
        if let files = block.files { out.key("files", in: &object); encode(files, into: &out, level: level + 1) }
        if let groupAccess = block.groupAccess {
            out.key("group_access", in: &object)
            encode(groupAccess, into: &out, level: level + 1)
        }
        if let lastModified = block.lastModified { out.key("last_modified", in: &object); out.string(lastModified) }
        if let offline = block.offline { out.key("offline", in: &object); out.boolean(offline) }
        if let download = block.offlineDownload {
            out.key("offline_download", in: &object)
            encode(download, into: &out, level: level + 1)
        }
        out.key("parents", in: &object)
        out.strings(block.parents, level: level + 1)
        if let reason = block.reason { out.key("reason", in: &object); out.string(reason) }
        if let requiresNetwork = block.requiresNetwork { out.key("requires_network", in: &object); out.strings(requiresNetwork, level: level + 1) }
        if let runtime = block.runtime { out.key("runtime", in: &object); out.string(runtime) }
        if let sha256 = block.sha256 { out.key("sha256", in: &object); out.string(sha256) }
        if let size = block.size { out.key("size", in: &object); out.unsigned(size) }
        if let split = block.splitTest {
            out.key("split_test", in: &object)
            var inner = out.beginObject(level: level + 1)
            if let group = split.groupID { out.key("group_id", in: &inner); out.integer(Int64(group)) }
            out.key("usage_id", in: &inner)
            out.string(split.usageID)
            out.key("user_partition_id", in: &inner)
            out.integer(Int64(split.userPartitionID))
            out.endObject(inner)
        }
        out.key("type", in: &object)
        out.string(block.type)
        if let unpackedSize = block.unpackedSize { out.key("unpacked_size", in: &object); out.unsigned(unpackedSize) }
        out.key("usage_id", in: &object)
        out.string(block.usageID)
        out.endObject(object)
    }

    /// Partition ids in byte order, as `sortedKeys` orders them.
    private static func encode(_ groupAccess: [String: [Int]], into out: inout Writer, level: Int) {
        var inner = out.beginObject(level: level)
        for partition in groupAccess.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out.dynamicKey(partition, in: &inner)
            out.integers(groupAccess[partition] ?? [], level: level + 1)
        }
        out.endObject(inner)
    }

    private static func encode(_ download: OfflineDownload, into out: inout Writer, level: Int) {
        var inner = out.beginObject(level: level)
        out.key("file_size", in: &inner)
        out.unsigned(download.fileSize)
        out.key("file_url", in: &inner)
        out.string(download.fileURL)
        out.key("last_modified", in: &inner)
        out.string(download.lastModified)
        out.endObject(inner)
    }

    /// An open object: its nesting level and how many fields it has so far.
    struct Object {
        let level: Int
        var count = 0
    }

    struct Writer {
        var bytes: [UInt8] = []

        mutating func indent(_ level: Int) {
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
        }

        mutating func beginObject(level: Int) -> Object {
            bytes.append(UInt8(ascii: "{"))
            return Object(level: level)
        }

        mutating func key(_ key: StaticString, in object: inout Object) {
            if object.count > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\n"))
            indent(object.level + 1)
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
            object.count += 1
        }

        /// A key that is data (a partition id), escaped like any string.
        mutating func dynamicKey(_ key: String, in object: inout Object) {
            if object.count > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\n"))
            indent(object.level + 1)
            string(key)
            bytes.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
            object.count += 1
        }

        /// Foundation writes an empty container as an empty line between its brackets.
        mutating func endObject(_ object: Object) {
            bytes.append(UInt8(ascii: "\n"))
            if object.count == 0 { bytes.append(UInt8(ascii: "\n")) }
            indent(object.level)
            bytes.append(UInt8(ascii: "}"))
        }

        mutating func beginArray() { bytes.append(UInt8(ascii: "[")) }

        mutating func element(_ index: Int, level: Int) {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\n"))
            indent(level + 1)
        }

        mutating func endArray(count: Int, level: Int) {
            bytes.append(UInt8(ascii: "\n"))
            if count == 0 { bytes.append(UInt8(ascii: "\n")) }
            indent(level)
            bytes.append(UInt8(ascii: "]"))
        }

        mutating func strings(_ items: [String], level: Int) {
            beginArray()
            for (index, item) in items.enumerated() {
                element(index, level: level)
                string(item)
            }
            endArray(count: items.count, level: level)
        }

        mutating func integers(_ items: [Int], level: Int) {
            beginArray()
            for (index, item) in items.enumerated() {
                element(index, level: level)
                integer(Int64(item))
            }
            endArray(count: items.count, level: level)
        }

        mutating func string(_ value: String) { JSONString.append(value, to: &bytes) }

        mutating func unsigned(_ value: UInt64) { bytes.append(contentsOf: String(value).utf8) }
        mutating func integer(_ value: Int64) { bytes.append(contentsOf: String(value).utf8) }
        mutating func boolean(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    }
}
