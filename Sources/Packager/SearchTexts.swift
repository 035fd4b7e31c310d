import Crypto
import Foundation
import IncrementalBuild
import Synchronization

/// The text and terms of each block in the last search index, as the JSON literals `index.js`
/// holds, kept in the state folder so that a rebuild takes them from here for every block
/// whose page is unchanged instead of decoding the published index. A record answers for a
/// block only while its `content_hash` (the page it was read from) and whether it is offline
/// are those it was recorded with, and only for the text version and language it was taken
/// with (the terms depend on both).
///
/// The records are spread over `shardCount` files by usage id, and only the files holding a
/// changed record are written again: an edit to one page rewrites a 256th of the text. Each
/// file starts with a digest of the records it holds (`keysDigest`), so a rebuild tells which
/// files to write again from their first bytes, and reads a file whole only when a block in it
/// needs its text (`SearchTextCache`).
struct SearchTexts: Sendable {
    struct Text: Sendable {
        var contentHash: String
        var offline: Bool
        var text: ArraySlice<UInt8>
        var bodyTerms: ArraySlice<UInt8>
    }

    static let folderName = "search-texts"
    static let format = "coursepack-search-texts-v3"
    static let shardCount: UInt64 = 256

    let textVersion: Int
    let language: String
    /// By usage id.
    var texts: [String: Text] = [:]

    init(textVersion: Int, language: String, texts: [String: Text] = [:]) {
        self.textVersion = textVersion
        self.language = language
        self.texts = texts
    }

    static func shard(of usageID: String) -> Int { Int(SearchIndexStep.hash(usageID) % shardCount) }

    static func path(ofShard shard: Int, in stateFolder: String) -> String {
        stateFolder + "/" + folderName + "/" + String(shard) + ".bin"
    }

    /// A record as its shard's digest counts it.
    struct Key {
        var usageID: String
        var contentHash: String
        var offline: Bool
    }

    /// What a shard's records are, without their text: the usage ids with the content hash
    /// and offline flag each was recorded for, by usage id (where one is listed twice, the
    /// last, as the records keep it). Equal digests, the same records: a shard whose blocks all
    /// keep their page needs no rewrite.
    static func keysDigest(of keys: [Key]) -> [UInt8] {
        var hasher = SHA256()
        func add(_ text: String) {
            var text = text
            text.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }
        let order = keys.indices.sorted { keys[$0].usageID < keys[$1].usageID || (keys[$0].usageID == keys[$1].usageID && $0 < $1) }
        for (rank, index) in order.enumerated() {
            if rank + 1 < order.count, keys[order[rank + 1]].usageID == keys[index].usageID { continue }
            add(keys[index].usageID)
            add(keys[index].offline ? "\u{0}1" : "\u{0}0")
            add(keys[index].contentHash)
            add("\n")
        }
        return Array(hasher.finalize())
    }

    /// Writes the files of `shards` with the records this holds for them.
    func save(shards: Set<Int>, to stateFolder: String) {
        guard !shards.isEmpty else { return }
        try? FileManager.default.createDirectory(atPath: stateFolder + "/" + Self.folderName, withIntermediateDirectories: true)
        var byShard: [Int: [String]] = [:]
        for usageID in texts.keys where shards.contains(Self.shard(of: usageID)) {
            byShard[Self.shard(of: usageID), default: []].append(usageID)
        }
        for shard in shards.sorted() {
            let usageIDs = (byShard[shard] ?? []).sorted()
            let keys = usageIDs.compactMap { usageID in texts[usageID].map { Key(usageID: usageID, contentHash: $0.contentHash, offline: $0.offline) } }
            let header = [ArraySlice(String(textVersion).utf8), ArraySlice(language.utf8), ArraySlice(Self.keysDigest(of: keys))]
            let size = usageIDs.reduce(RecordFile.recordSize(fieldLengths: header.map(\.count))) { total, usageID in
                guard let text = texts[usageID] else { return total }
                return total + RecordFile.recordSize(fieldLengths: [usageID.utf8.count, text.contentHash.utf8.count, 1, text.text.count, text.bodyTerms.count])
            }
            var file = RecordFile(format: Self.format, capacity: size)
            file.add(header)
            for usageID in usageIDs {
                guard let text = texts[usageID] else { continue }
                file.add([ArraySlice(usageID.utf8), ArraySlice(text.contentHash.utf8), [text.offline ? 1 : 0], text.text, text.bodyTerms])
            }
            file.save(to: Self.path(ofShard: shard, in: stateFolder), synced: false)
        }
    }
}

/// The records the last build left, read one shard at a time when a block of that shard asks
/// for its text: a one-page edit re-encodes one part of the index, and reading every shard for
/// it was three times the course's text, a third of the search step's time. Shared by the
/// workers that make the parts.
final class SearchTextCache: Sendable {
    let stateFolder: String
    let textVersion: Int
    let language: String
    private let shards = Mutex<[Int: [String: SearchTexts.Text]]>([:])

    init(stateFolder: String, textVersion: Int, language: String) {
        self.stateFolder = stateFolder
        self.textVersion = textVersion
        self.language = language
    }

    /// The records digest a shard's file was written with (`SearchTexts.keysDigest`), read from
    /// its first bytes; nil when it has no file of this text version and language.
    func keysDigest(ofShard shard: Int) -> [UInt8]? {
        guard let head = RecordFile.firstRecord(SearchTexts.path(ofShard: shard, in: stateFolder), format: SearchTexts.format),
            isOurs(head), head[2].count == 32
        else { return nil }
        return Array(head[2])
    }

    /// The recorded text of a block showing the page `contentHash`, if it is that page's.
    func text(of usageID: String, contentHash: String?, offline: Bool) -> SearchTexts.Text? {
        guard let contentHash, let text = records(ofShard: SearchTexts.shard(of: usageID))[usageID], text.contentHash == contentHash,
            text.offline == offline
        else { return nil }
        return text
    }

    /// Every record of the shard, read on first use; none when its file is missing, of another
    /// version or language, or damaged.
    private func records(ofShard shard: Int) -> [String: SearchTexts.Text] {
        if let known = shards.withLock({ $0[shard] }) { return known }
        var texts: [String: SearchTexts.Text] = [:]
        if let records = RecordFile.load(SearchTexts.path(ofShard: shard, in: stateFolder), format: SearchTexts.format),
            let head = records.first, isOurs(head)
        {
            for fields in records.dropFirst() where fields.count == 5 {
                let usageID = String(decoding: fields[0], as: UTF8.self)
                // A record in the wrong file would survive its block's removal: not trusted.
                guard SearchTexts.shard(of: usageID) == shard else { continue }
                texts[usageID] = SearchTexts.Text(
                    contentHash: String(decoding: fields[1], as: UTF8.self), offline: fields[2].first == 1, text: fields[3], bodyTerms: fields[4])
            }
        }
        // Two workers may read one shard at once: both read the same file, the first kept.
        return shards.withLock { loaded in
            if let first = loaded[shard] { return first }
            loaded[shard] = texts
            return texts
        }
    }

    private func isOurs(_ head: [ArraySlice<UInt8>]) -> Bool {
        head.count == 3 && String(decoding: head[0], as: UTF8.self) == String(textVersion) && String(decoding: head[1], as: UTF8.self) == language
    }
}
