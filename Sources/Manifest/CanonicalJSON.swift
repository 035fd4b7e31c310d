/// The manifest's one byte layout, written directly: two-space indentation, `"key" : value`,
/// keys in sorted order, `/` and non-ASCII unescaped, absent optionals left out. Identical
/// manifests are identical bytes on every platform and toolchain, and writing a manifest of
/// thousands of blocks takes a few milliseconds instead of a generic encoder's tens.
/// (The layout is the one Foundation's pretty-printing, sorted-keys JSONEncoder produced for
/// schema 1 on Linux, so manifests written before stay byte-identical; a test holds the two
/// together.)
enum CanonicalJSON {
    static func encode(_ manifest: CourseManifest) -> [UInt8] {
        var out = Writer()
        out.bytes.reserveCapacity(256 + manifest.blocks.count * 900)
        out.object(level: 0) { object in
            object.field("blocks") { out in
                out.array(manifest.blocks, level: 1) { out, block in encode(block, into: &out, level: 2) }
            }
            object.field("course_id") { $0.string(manifest.courseID) }
            object.field("generator") { $0.string(manifest.generator) }
            object.field("published_at") { $0.string(manifest.publishedAt) }
            object.field("schema_version") { $0.integer(Int64(manifest.schemaVersion)) }
        }
        out.bytes.append(UInt8(ascii: "\n"))
        return out.bytes
    }

    /// Keys in the byte order `sortedKeys` gives: `offline` < `offline_download`, `reason` < `requires_network`.
    private static func encode(_ block: BlockEntry, into out: inout Writer, level: Int) {
        out.object(level: level) { object in
            if let archive = block.archive { object.field("archive") { $0.string(archive) } }
            if let contentHash = block.contentHash { object.field("content_hash") { $0.string(contentHash) } }
            if let displayName = block.displayName { object.field("display_name") { $0.string(displayName) } }
            if let lastModified = block.lastModified { object.field("last_modified") { $0.string(lastModified) } }
            if let offline = block.offline { object.field("offline") { $0.boolean(offline) } }
            if let download = block.offlineDownload {
                object.field("offline_download") { out in
                    out.object(level: level + 1) { inner in
                        inner.field("file_size") { $0.unsigned(download.fileSize) }
                        inner.field("file_url") { $0.string(download.fileURL) }
                        inner.field("last_modified") { $0.string(download.lastModified) }
                    }
                }
            }
            object.field("parents") { out in out.array(block.parents, level: level + 1) { out, parent in out.string(parent) } }
            if let reason = block.reason { object.field("reason") { $0.string(reason) } }
            if let requiresNetwork = block.requiresNetwork {
                object.field("requires_network") { out in
                    out.array(requiresNetwork, level: level + 1) { out, item in out.string(item) }
                }
            }
            if let sha256 = block.sha256 { object.field("sha256") { $0.string(sha256) } }
            if let size = block.size { object.field("size") { $0.unsigned(size) } }
            object.field("type") { $0.string(block.type) }
            object.field("usage_id") { $0.string(block.usageID) }
        }
    }

    struct Writer {
        var bytes: [UInt8] = []

        mutating func indent(_ level: Int) {
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
        }

        mutating func object(level: Int, _ fields: (inout ObjectWriter) -> Void) {
            bytes.append(UInt8(ascii: "{"))
            // The object writer takes the buffer over and hands it back, without copying it.
            var object = ObjectWriter(writer: self, level: level + 1)
            bytes = []
            fields(&object)
            self = object.writer
            bytes.append(UInt8(ascii: "\n"))
            if object.count == 0 { bytes.append(UInt8(ascii: "\n")) }
            indent(level)
            bytes.append(UInt8(ascii: "}"))
        }

        mutating func array<T>(_ items: [T], level: Int, _ element: (inout Writer, T) -> Void) {
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(UInt8(ascii: "\n"))
                indent(level + 1)
                element(&self, item)
            }
            bytes.append(UInt8(ascii: "\n"))
            if items.isEmpty { bytes.append(UInt8(ascii: "\n")) }
            indent(level)
            bytes.append(UInt8(ascii: "]"))
        }

        mutating func string(_ value: String) {
            bytes.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: Array("\\u00".utf8))
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }

        mutating func unsigned(_ value: UInt64) { bytes.append(contentsOf: String(value).utf8) }
        mutating func integer(_ value: Int64) { bytes.append(contentsOf: String(value).utf8) }
        mutating func boolean(_ value: Bool) { bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    }

    struct ObjectWriter {
        var writer: Writer
        let level: Int
        var count = 0

        mutating func field(_ key: StaticString, _ value: (inout Writer) -> Void) {
            if count > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writer.bytes.append(UInt8(ascii: "\n"))
            writer.indent(level)
            writer.bytes.append(UInt8(ascii: "\""))
            writer.bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            writer.bytes.append(contentsOf: Array("\" : ".utf8))
            value(&writer)
            count += 1
        }
    }
}
