import Crypto
import IncrementalBuild
import Manifest

/// How the last search index was cut, by content, kept in the state folder: each document's
/// encoded length under its fingerprint (every field its bytes in a part are made from), and
/// each part's SHA-256 and deflated piece (`DeflatedChunks`) under the fingerprints of the
/// documents it holds. A rebuild cuts the parts from lengths alone and encodes, hashes and
/// deflates only a part whose documents changed: a one-page edit costs one part, not the
/// course's whole text. Every record is keyed by what it was computed from, so one older than
/// the publish beside it (a power cut) is still true of what it names; records written by
/// another program, for another language or at another level are not used (`scope`), since the
/// lengths are those of this program's encoding.
struct SearchParts: Sendable {
    struct Part: Sendable, Equatable {
        var sha256: String
        /// The part's `DeflatedChunks` key.
        var chunkKey: [UInt8]
    }

    static let fileName = "search-parts.bin"
    static let format = "coursepack-search-parts-v2"

    let scope: String
    /// By document fingerprint: the document's encoded length, 0 for a block with no document.
    private(set) var lengths: [[UInt8]: Int] = [:]
    /// The fingerprints in `lengths`, in the order they were recorded (the course's), which
    /// is the order they are saved in: no sort of 100,000 keys.
    private var recorded: [[UInt8]] = []
    /// By part fingerprint (`partKey`).
    var parts: [[UInt8]: Part] = [:]

    init(scope: String) {
        self.scope = scope
    }

    /// Room for `count` documents' records, made at once rather than grown 100,000 times.
    mutating func reserveCapacity(_ count: Int) {
        lengths.reserveCapacity(count)
        recorded.reserveCapacity(count)
    }

    mutating func record(_ fingerprint: [UInt8], length: Int) {
        guard lengths.updateValue(length, forKey: fingerprint) == nil else { return }
        recorded.append(fingerprint)
    }

    /// Whether this holds other records than `other`, whatever their order.
    func differs(from other: SearchParts) -> Bool {
        lengths != other.lengths || parts != other.parts
    }

    /// What this program's search step depends on besides the documents.
    static func scope(language: String, level: Int32) -> String {
        [IncrementalBuild.programStamp, SearchIndexStep.fingerprint, String(level), language].joined(separator: "\n")
    }

    /// Empty when there is no file, or one of another scope.
    static func load(from stateFolder: String, scope: String) -> SearchParts {
        var cache = SearchParts(scope: scope)
        guard let records = RecordFile.load(stateFolder + "/" + fileName, format: format),
            let head = records.first, head.count == 1, head[0].elementsEqual(scope.utf8)
        else { return cache }
        cache.lengths.reserveCapacity(records.count)
        cache.recorded.reserveCapacity(records.count)
        for fields in records.dropFirst() {
            switch fields.count {
            case 2 where fields[0].count == 32 && fields[1].count == 4:
                cache.record(Array(fields[0]), length: Int(fields[1].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
            case 3 where fields[0].count == 32 && fields[1].count == 64 && fields[2].count == 32:
                cache.parts[Array(fields[0])] = Part(sha256: String(decoding: fields[1], as: UTF8.self), chunkKey: Array(fields[2]))
            default:
                continue
            }
        }
        return cache
    }

    func save(to stateFolder: String) {
        let partFields = parts.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        var size = RecordFile.recordSize(fieldLengths: [scope.utf8.count])
        size += recorded.count * RecordFile.recordSize(fieldLengths: [32, 4])
        for (key, part) in partFields { size += RecordFile.recordSize(fieldLengths: [key.count, part.sha256.utf8.count, part.chunkKey.count]) }
        var file = RecordFile(format: Self.format, capacity: size)
        file.add([ArraySlice(scope.utf8)])
        for fingerprint in recorded {
            let length = withUnsafeBytes(of: UInt32(clamping: lengths[fingerprint] ?? 0).littleEndian) { Array($0) }
            file.add([fingerprint[...], length[...]])
        }
        for (key, part) in partFields { file.add([key[...], ArraySlice(part.sha256.utf8), part.chunkKey[...]]) }
        file.save(to: stateFolder + "/" + Self.fileName, synced: false)
    }

    /// A document's fingerprint: its block, name, place, page, and the page its text is read
    /// from. Nil when the text would be read from the block's files rather than a page
    /// (an offline entry without a content hash): nothing here then says what the text is.
    static func fingerprint(of entry: BlockEntry, title: String, path: [String], page: String?) -> [UInt8]? {
        guard !entry.isOffline || entry.contentHash != nil else { return nil }
        var fields: [UInt8] = []
        func add(_ text: String) {
            withUnsafeBytes(of: UInt64(text.utf8.count).littleEndian) { fields.append(contentsOf: $0) }
            fields.append(contentsOf: text.utf8)
        }
        add(entry.usageID)
        add(entry.type)
        add(title)
        add(String(path.count))
        for name in path { add(name) }
        add(page.map { "+" + $0 } ?? "-")
        add(entry.contentHash.map { "+" + $0 } ?? "-")
        add(entry.isOffline ? "offline" : "online")
        return Array(SHA256.hash(data: fields))
    }

    /// A part's fingerprint: the fingerprints of its documents, in order.
    static func partKey(of fingerprints: some Collection<[UInt8]>) -> [UInt8] {
        var hasher = SHA256()
        withUnsafeBytes(of: UInt64(fingerprints.count).littleEndian) { hasher.update(bufferPointer: $0) }
        for fingerprint in fingerprints { hasher.update(data: fingerprint) }
        return Array(hasher.finalize())
    }
}
