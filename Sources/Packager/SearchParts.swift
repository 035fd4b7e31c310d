import Crypto
import IncrementalBuild
import Manifest

/// How the last search index was cut, by content, kept in the state folder: each document's
/// encoded length under its fingerprint (every field its bytes in a part are made from), where
/// its bytes are in the part that held it, and each part's SHA-256 and deflated piece
/// (`DeflatedChunks`) under the fingerprints of the documents it holds. A rebuild cuts the parts
/// from lengths alone and encodes, hashes and deflates only a part whose documents changed,
/// taking the bytes of its unchanged documents from the last build's parts: a one-page edit
/// costs one part, not the course's whole text. Every record is keyed by what it was computed
/// from, so one older than the publish beside it (a power cut) is still true of what it names;
/// records written by another program, for another language or at another level are not used
/// (`scope`), since the lengths are those of this program's encoding.
struct SearchParts: Sendable {
    struct Part: Sendable, Equatable {
        var sha256: String
        /// The part's `DeflatedChunks` key.
        var chunkKey: [UInt8]
    }

    /// What the page a block's text is read from is: the SHA-256 of its usage id, content hash
    /// and whether it is offline. A block renamed or moved keeps its text key, not its
    /// fingerprint, so its text is found again in the part that held it.
    struct TextKey: Hashable, Sendable {
        let words: SIMD4<UInt64>

        init(usageID: String, contentHash: String, offline: Bool) {
            var hasher = SHA256()
            for field in [usageID, contentHash, offline ? "offline" : "online"] {
                withUnsafeBytes(of: UInt64(field.utf8.count).littleEndian) { hasher.update(bufferPointer: $0) }
                hasher.update(data: Array(field.utf8))
            }
            self.init(bytes: Array(hasher.finalize()))
        }

        /// Nil unless 32 bytes.
        init?(_ bytes: ArraySlice<UInt8>) {
            guard bytes.count == 32 else { return nil }
            self.init(bytes: Array(bytes))
        }

        private init(bytes: [UInt8]) {
            func word(_ index: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[index * 8 + $1]) << (8 * UInt64($1)) } }
            words = SIMD4(word(0), word(1), word(2), word(3))
        }

        var bytes: [UInt8] {
            (0..<4).flatMap { index in withUnsafeBytes(of: words[index].littleEndian) { Array($0) } }
        }
    }

    /// One document as the last index held it: its encoded length (0 for a block with no
    /// document) and, for a document, the piece of the part that held it (a position in
    /// `chunkKeys`, -1 for none), the offset of its first byte in that part's bytes, and its
    /// block's text key (nil for a block whose text is not read from a page).
    struct Document: Sendable, Equatable {
        var length: Int
        var chunk: Int32 = -1
        var offset: Int32 = 0
        var textKey: TextKey?
    }

    static let fileName = "search-parts.bin"
    static let format = "coursepack-search-parts-v3"

    let scope: String
    /// By document fingerprint.
    private(set) var documents: [[UInt8]: Document] = [:]
    /// The fingerprints in `documents`, in the order they were recorded (the course's), which
    /// is the order they are saved in: no sort of 100,000 keys.
    private var recorded: [[UInt8]] = []
    /// The deflated pieces the documents are in, in the order of the parts.
    private(set) var chunkKeys: [[UInt8]] = []
    /// By part fingerprint (`partKey`).
    var parts: [[UInt8]: Part] = [:]

    init(scope: String) {
        self.scope = scope
    }

    /// Room for `count` documents' records, made at once rather than grown 100,000 times.
    mutating func reserveCapacity(_ count: Int) {
        documents.reserveCapacity(count)
        recorded.reserveCapacity(count)
    }

    func length(of fingerprint: [UInt8]) -> Int? {
        documents[fingerprint]?.length
    }

    /// The position `addChunk` gave the piece that follows in the part order.
    mutating func addChunk(_ key: [UInt8]) -> Int32 {
        chunkKeys.append(key)
        return Int32(chunkKeys.count - 1)
    }

    /// The first record of a fingerprint is kept: a second block with the same fingerprint has
    /// the same bytes.
    mutating func record(_ fingerprint: [UInt8], _ document: Document) {
        guard documents[fingerprint] == nil else { return }
        documents[fingerprint] = document
        recorded.append(fingerprint)
    }

    /// The fingerprint of the document that holds each text key.
    func fingerprintsByText() -> [TextKey: [UInt8]] {
        var found: [TextKey: [UInt8]] = [:]
        for fingerprint in recorded {
            guard let document = documents[fingerprint], document.chunk >= 0, let key = document.textKey else { continue }
            found[key] = found[key] ?? fingerprint
        }
        return found
    }

    /// Whether this holds other records than `other`, whatever their order.
    func differs(from other: SearchParts) -> Bool {
        documents != other.documents || parts != other.parts || chunkKeys != other.chunkKeys
    }

    /// What this program's search step depends on besides the documents.
    static func scope(language: String, level: Int32) -> String {
        [IncrementalBuild.programStamp, SearchIndexStep.fingerprint, String(level), language].joined(separator: "\n")
    }

    /// Empty when there is no file, or one of another scope. A record that is not of one of the
    /// forms `save` writes, or names a piece the file does not list, is left out.
    static func load(from stateFolder: String, scope: String) -> SearchParts {
        var cache = SearchParts(scope: scope)
        guard let records = RecordFile.load(stateFolder + "/" + fileName, format: format),
            let head = records.first, head.count == 1, head[0].elementsEqual(scope.utf8)
        else { return cache }
        cache.reserveCapacity(records.count)
        for fields in records.dropFirst() {
            switch fields.count {
            case 1 where fields[0].count == 32:
                _ = cache.addChunk(Array(fields[0]))
            case 2 where fields[0].count == 32 && fields[1].count == 4:
                cache.record(Array(fields[0]), Document(length: Int(Self.number(fields[1])), textKey: nil))
            case 4 where fields[0].count == 32 && fields[1].count == 4 && fields[2].count == 4 && fields[3].count == 4,
                5 where fields[0].count == 32 && fields[1].count == 4 && fields[2].count == 4 && fields[3].count == 4 && fields[4].count == 32:
                let chunk = Self.number(fields[2])
                guard chunk < cache.chunkKeys.count, let offset = Int32(exactly: Self.number(fields[3])) else { continue }
                cache.record(Array(fields[0]), Document(
                    length: Int(Self.number(fields[1])), chunk: Int32(chunk), offset: offset,
                    textKey: fields.count == 5 ? TextKey(fields[4]) : nil))
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
        size += chunkKeys.count * RecordFile.recordSize(fieldLengths: [32])
        size += recorded.count * RecordFile.recordSize(fieldLengths: [32, 4, 4, 4, 32])
        for (key, part) in partFields { size += RecordFile.recordSize(fieldLengths: [key.count, part.sha256.utf8.count, part.chunkKey.count]) }
        var file = RecordFile(format: Self.format, capacity: size)
        file.add([ArraySlice(scope.utf8)])
        for key in chunkKeys { file.add([key[...]]) }
        for (key, part) in partFields { file.add([key[...], ArraySlice(part.sha256.utf8), part.chunkKey[...]]) }
        for fingerprint in recorded {
            guard let document = documents[fingerprint] else { continue }
            let length = Self.field(UInt32(clamping: document.length))
            guard document.chunk >= 0 else {
                file.add([fingerprint[...], length])
                continue
            }
            var fields = [fingerprint[...], length, Self.field(UInt32(document.chunk)), Self.field(UInt32(document.offset))]
            if let key = document.textKey { fields.append(key.bytes[...]) }
            file.add(fields)
        }
        file.save(to: stateFolder + "/" + Self.fileName, synced: false)
    }

    private static func field(_ value: UInt32) -> ArraySlice<UInt8> {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }[...]
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
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

    /// A block's text key, nil for a block without a content hash (its text is read from
    /// nothing the key could name).
    static func textKey(of entry: BlockEntry) -> TextKey? {
        entry.contentHash.map { TextKey(usageID: entry.usageID, contentHash: $0, offline: entry.isOffline) }
    }

    /// A part's fingerprint: the fingerprints of its documents, in order.
    static func partKey(of fingerprints: some Collection<[UInt8]>) -> [UInt8] {
        var hasher = SHA256()
        withUnsafeBytes(of: UInt64(fingerprints.count).littleEndian) { hasher.update(bufferPointer: $0) }
        for fingerprint in fingerprints { hasher.update(data: fingerprint) }
        return Array(hasher.finalize())
    }
}
