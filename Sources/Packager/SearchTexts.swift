import Foundation
import IncrementalBuild

/// The text and terms of each block in the last search index, as the JSON literals `index.js`
/// holds, kept in the state folder so that a rebuild takes them from here for every block
/// whose page is unchanged instead of decoding the published index. A record answers for a
/// block only while its `content_hash` (the page it was read from) and whether it is offline
/// are those it was recorded with, and only for the text version and language it was taken
/// with (the terms depend on both).
///
/// The records are spread over `shardCount` files by usage id, and only the files holding a
/// changed record are written again: an edit to one page rewrites a sixty-fourth of the text.
struct SearchTexts: Sendable {
    struct Text: Sendable {
        var contentHash: String
        var offline: Bool
        var text: ArraySlice<UInt8>
        var bodyTerms: ArraySlice<UInt8>
    }

    static let folderName = "search-texts"
    static let format = "coursepack-search-texts-v2"
    static let shardCount: UInt64 = 64

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

    /// Every record of the text version and language asked for; a shard that is missing, of
    /// another version or language, or damaged adds none.
    static func load(from stateFolder: String, textVersion: Int, language: String) -> SearchTexts {
        var cache = SearchTexts(textVersion: textVersion, language: language)
        for shard in 0..<Int(shardCount) {
            guard let records = RecordFile.load(path(ofShard: shard, in: stateFolder), format: format),
                let head = records.first, head.count == 2, String(decoding: head[0], as: UTF8.self) == String(textVersion),
                String(decoding: head[1], as: UTF8.self) == language
            else { continue }
            for fields in records.dropFirst() where fields.count == 5 {
                let usageID = String(decoding: fields[0], as: UTF8.self)
                // A record in the wrong file would survive its block's removal: not trusted.
                guard Self.shard(of: usageID) == shard else { continue }
                cache.texts[usageID] = Text(
                    contentHash: String(decoding: fields[1], as: UTF8.self), offline: fields[2].first == 1,
                    text: fields[3], bodyTerms: fields[4])
            }
        }
        return cache
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
            let header = [ArraySlice(String(textVersion).utf8), ArraySlice(language.utf8)]
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

    /// The recorded text of a block showing the page `contentHash`, if it is that page's.
    func text(of usageID: String, contentHash: String?, offline: Bool) -> Text? {
        guard let contentHash, let text = texts[usageID], text.contentHash == contentHash, text.offline == offline else { return nil }
        return text
    }
}
