import Foundation

/// Reads a manifest without the generic decoder, whose cost dominated a rebuild of a large
/// course (tens of milliseconds for thousands of blocks). It follows the `Codable` rules the
/// types declare: a required field must be present and of its type, an optional one may be
/// absent or null, unknown keys are ignored. It never reports why a manifest is wrong: on
/// anything it does not accept it returns nil and `ManifestFile.decode` takes the generic
/// decoder, which does; a test holds the two to the same result.
enum ManifestReader {
    /// One copy of each string that blocks repeat: their file listings' paths and keys, their
    /// parents, dates and runtime. At 100,000 blocks there are half a million listed files but
    /// a few thousand distinct keys; kept once each, the previous publish a rebuild reads takes
    /// half the memory. One table per manifest or part read, by one thread.
    final class SharedStrings {
        private var known = Set<ExactString>()

        func callAsFunction(_ string: String) -> String {
            known.insert(ExactString(string)).memberAfterInsert.string
        }
    }

    /// A string compared and hashed by its UTF-8 bytes. `String`'s `==` is canonical
    /// equivalence, so a set of `String` handed back the precomposed "café" for a decomposed
    /// one: another URL's or file name's bytes.
    struct ExactString: Hashable {
        let string: String

        init(_ string: String) { self.string = string }

        static func == (a: ExactString, b: ExactString) -> Bool {
            let compared = a.string.utf8.withContiguousStorageIfAvailable { left in
                b.string.utf8.withContiguousStorageIfAvailable { right -> Bool in
                    guard left.count == right.count else { return false }
                    guard let leftBytes = left.baseAddress, let rightBytes = right.baseAddress else { return true }
                    return memcmp(leftBytes, rightBytes, left.count) == 0
                }
            }
            // A string bridged from elsewhere has no contiguous UTF-8; none read here is one.
            return (compared ?? nil) ?? a.string.utf8.elementsEqual(b.string.utf8)
        }

        func hash(into hasher: inout Hasher) {
            let hashed: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            if hashed == nil {
                for byte in string.utf8 { hasher.combine(byte) }
            }
        }
    }

    static func manifest(_ bytes: [UInt8]) -> CourseManifest? {
        guard case .object(let top)? = JSONValue.parse(bytes) else { return nil }
        let fields = Fields(top)
        let shared = SharedStrings()
        guard let blocks = fields.array("blocks", { block($0, shared) }) else { return nil }
        return manifest(fields, blocks: blocks)
    }

    /// The manifest without its blocks (`blocks` empty): everything else, read as `manifest`
    /// reads it, the blocks only checked to be well-formed JSON.
    static func manifestWithoutBlocks(_ bytes: [UInt8]) -> CourseManifest? {
        guard let top = JSONValue.parseObject(bytes, skipping: ["blocks"]) else { return nil }
        return manifest(Fields(top), blocks: [])
    }

    /// Every top-level field but the blocks, which the caller has read (or passed over).
    private static func manifest(_ fields: Fields, blocks: [BlockEntry]) -> CourseManifest? {
        guard let schemaVersion = fields.int("schema_version"), let courseID = fields.string("course_id"),
            let publishedAt = fields.string("published_at"), let generator = fields.string("generator"),
            let runtime = fields.optional("runtime", sharedArchive), let outline = fields.optional("outline", { $0.array(outlineEntry) }),
            let search = fields.optional("search", sharedArchive), let files = fields.optional("files", Self.courseFiles)
        else { return nil }
        var manifest = CourseManifest(courseID: courseID, publishedAt: publishedAt, generator: generator, blocks: blocks, runtime: runtime)
        manifest.schemaVersion = schemaVersion
        manifest.outline = outline
        manifest.search = search
        manifest.files = files
        return manifest
    }

    static func part(_ bytes: [UInt8]) -> ManifestPart? {
        guard case .object(let top)? = JSONValue.parse(bytes) else { return nil }
        let fields = Fields(top)
        let shared = SharedStrings()
        guard let blocks = fields.array("blocks", { block($0, shared) }), let outline = fields.array("outline", outlineEntry),
            let files = fields.value("files").flatMap(Self.courseFiles)
        else { return nil }
        return ManifestPart(blocks: blocks, outline: outline, files: files)
    }

    static func index(_ bytes: [UInt8]) -> ManifestIndex? {
        guard case .object(let top)? = JSONValue.parse(bytes) else { return nil }
        let fields = Fields(top)
        guard let schemaVersion = fields.int("schema_version"), let courseID = fields.string("course_id"),
            let publishedAt = fields.string("published_at"), let generator = fields.string("generator"),
            let parts = fields.array("parts", partReference), let runtime = fields.optional("runtime", sharedArchive),
            let search = fields.optional("search", sharedArchive), let files = fields.optional("files", Self.courseFiles)
        else { return nil }
        var index = ManifestIndex(
            courseID: courseID, publishedAt: publishedAt, generator: generator, runtime: runtime, search: search, files: files,
            parts: parts)
        index.schemaVersion = schemaVersion
        return index
    }

    static func partReference(_ value: JSONValue) -> PartReference? {
        guard case .object(let object) = value else { return nil }
        let fields = Fields(object)
        guard let sha256 = fields.string("sha256"), let size = fields.unsigned("size"), let blocks = fields.int("blocks"),
            let containers = fields.int("containers")
        else { return nil }
        return PartReference(sha256: sha256, size: size, blocks: blocks, containers: containers)
    }

    static func courseFiles(_ value: JSONValue) -> [String: CourseFile]? {
        guard case .object(let object) = value else { return nil }
        var files: [String: CourseFile] = [:]
        files.reserveCapacity(object.count)
        for member in object {
            guard case .object(let inner) = member.value else { return nil }
            let fields = Fields(inner)
            guard let size = fields.unsigned("size"), let compressedSize = fields.unsigned("compressed_size"),
                let encodingName = fields.optional("encoding", { $0.string })
            else { return nil }
            var encoding: CourseFile.Encoding?
            if let encodingName {
                guard let known = CourseFile.Encoding(rawValue: encodingName) else { return nil }
                encoding = known
            }
            files[member.key] = CourseFile(size: size, compressedSize: compressedSize, encoding: encoding)
        }
        return files
    }

    static func listing(_ value: JSONValue, _ shared: SharedStrings? = nil) -> FileListing? {
        guard case .object(let object) = value else { return nil }
        var listing = FileListing(minimumCapacity: object.count)
        for member in object {
            guard let sha256 = member.value.string else { return nil }
            if let shared {
                listing[shared(member.key)] = shared(sha256)
            } else {
                listing[member.key] = sha256
            }
        }
        return listing
    }

    /// The fields of one object, read by the rules of synthesized `Decodable`.
    struct Fields {
        let object: [JSONMember]

        init(_ object: [JSONMember]) { self.object = object }

        /// Found by comparing keys: an entry has a dozen, and they are short.
        subscript(_ key: String) -> JSONValue? {
            object.first { $0.key == key }?.value
        }

        /// Nil when absent or of another type.
        func string(_ key: String) -> String? { self[key]?.string }
        func int(_ key: String) -> Int? { self[key]?.int }
        func unsigned(_ key: String) -> UInt64? { self[key]?.unsigned }

        func array<T>(_ key: String, _ element: (JSONValue) -> T?) -> [T]? { self[key]?.array(element) }
        func value(_ key: String) -> JSONValue? { self[key] }

        /// `.some(nil)` when absent or null, nil when present and not a `T`.
        func optional<T>(_ key: String, _ read: (JSONValue) -> T?) -> T?? {
            guard let value = self[key] else { return .some(nil) }
            if case .null = value { return .some(nil) }
            return read(value).map { .some($0) }
        }
    }

    static func sharedArchive(_ value: JSONValue) -> SharedArchive? {
        guard case .object(let object) = value else { return nil }
        let fields = Fields(object)
        guard let archive = fields.string("archive"), let size = fields.unsigned("size"), let sha256 = fields.string("sha256"),
            let contentHash = fields.string("content_hash"), let files = fields.optional("files", { listing($0) }),
            let unpackedSize = fields.optional("unpacked_size", { $0.unsigned })
        else { return nil }
        var shared = SharedArchive(archive: archive, size: size, sha256: sha256, contentHash: contentHash)
        shared.files = files
        shared.unpackedSize = unpackedSize
        return shared
    }

    static func outlineEntry(_ value: JSONValue) -> OutlineEntry? {
        guard case .object(let object) = value else { return nil }
        let fields = Fields(object)
        guard let usageID = fields.string("usage_id"), let type = fields.string("type"),
            let displayName = fields.optional("display_name", { $0.string }), let children = fields.array("children", { $0.string })
        else { return nil }
        return OutlineEntry(usageID: usageID, type: type, displayName: displayName, children: children)
    }

    static func block(_ value: JSONValue, _ shared: SharedStrings) -> BlockEntry? {
        guard case .object(let object) = value else { return nil }
        let fields = Fields(object)
        guard let usageID = fields.string("usage_id"), let type = fields.string("type"),
            let displayName = fields.optional("display_name", { $0.string }),
            let parents = fields.array("parents", { $0.string.map(shared.callAsFunction) }),
            let archive = fields.optional("archive", { $0.string }), let size = fields.optional("size", { $0.unsigned }),
            let sha256 = fields.optional("sha256", { $0.string }), let contentHash = fields.optional("content_hash", { $0.string }),
            let lastModified = fields.optional("last_modified", { $0.string.map(shared.callAsFunction) }),
            let offlineDownload = fields.optional("offline_download", { offlineDownload($0, shared) }),
            let offline = fields.optional("offline", { $0.boolean }), let reason = fields.optional("reason", { $0.string }),
            let requiresNetwork = fields.optional("requires_network", { $0.array { $0.string.map(shared.callAsFunction) } }),
            let runtime = fields.optional("runtime", { $0.string.map(shared.callAsFunction) }),
            let groupAccess = fields.optional("group_access", Self.groupAccess),
            let splitTest = fields.optional("split_test", Self.splitTest),
            let files = fields.optional("files", { listing($0, shared) }), let unpackedSize = fields.optional("unpacked_size", { $0.unsigned })
        else { return nil }
        var entry = BlockEntry(
            usageID: usageID, type: type, displayName: displayName, parents: parents, archive: archive, size: size, sha256: sha256,
            contentHash: contentHash, lastModified: lastModified, offline: offline, reason: reason, requiresNetwork: requiresNetwork,
            runtime: runtime)
        // As decoded, not as the initializer derives it.
        entry.offlineDownload = offlineDownload
        entry.groupAccess = groupAccess
        entry.splitTest = splitTest
        entry.files = files
        entry.unpackedSize = unpackedSize
        return entry
    }

    static func offlineDownload(_ value: JSONValue, _ shared: SharedStrings) -> OfflineDownload? {
        guard case .object(let object) = value else { return nil }
        let fields = Fields(object)
        guard let fileURL = fields.string("file_url"), let lastModified = fields.string("last_modified").map(shared.callAsFunction),
            let fileSize = fields.unsigned("file_size")
        else { return nil }
        return OfflineDownload(fileURL: fileURL, lastModified: lastModified, fileSize: fileSize)
    }

    static func groupAccess(_ value: JSONValue) -> [String: [Int]]? {
        guard case .object(let object) = value else { return nil }
        var groups: [String: [Int]] = [:]
        for member in object {
            guard let ids = member.value.array({ $0.int }) else { return nil }
            groups[member.key] = ids
        }
        return groups
    }

    static func splitTest(_ value: JSONValue) -> SplitTestGroupEntry? {
        guard case .object(let object) = value else { return nil }
        let fields = Fields(object)
        guard let usageID = fields.string("usage_id"), let partition = fields.int("user_partition_id"),
            let groupID = fields.optional("group_id", { $0.int })
        else { return nil }
        return SplitTestGroupEntry(usageID: usageID, userPartitionID: partition, groupID: groupID)
    }
}

extension JSONValue {
    var string: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    var int: Int? {
        guard case .integer(let value) = self else { return nil }
        return Int(exactly: value)
    }

    var unsigned: UInt64? {
        switch self {
        case .integer(let value): return UInt64(exactly: value)
        case .unsigned(let value): return value
        default: return nil
        }
    }

    var boolean: Bool? {
        guard case .boolean(let value) = self else { return nil }
        return value
    }

    func array<T>(_ element: (JSONValue) -> T?) -> [T]? {
        guard case .array(let values) = self else { return nil }
        var result: [T] = []
        result.reserveCapacity(values.count)
        for value in values {
            guard let item = element(value) else { return nil }
            result.append(item)
        }
        return result
    }
}
