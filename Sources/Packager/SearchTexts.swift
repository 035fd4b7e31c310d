import IncrementalBuild

/// The text and terms of each block in the last search index, as the JSON literals `index.js`
/// holds, kept in the state folder so that a rebuild takes them from here for every block
/// whose page is unchanged instead of decoding the published index. A record answers for a
/// block only while its `content_hash` (the page it was read from) and whether it is offline
/// are those it was recorded with, and only for the text version and language it was taken
/// with (the terms depend on both).
struct SearchTexts: Sendable {
    struct Text: Sendable {
        var contentHash: String
        var offline: Bool
        var text: ArraySlice<UInt8>
        var bodyTerms: ArraySlice<UInt8>
    }

    static let fileName = "search-texts.bin"
    static let format = "coursepack-search-texts-v1"

    let textVersion: Int
    let language: String
    /// By usage id.
    var texts: [String: Text] = [:]

    init(textVersion: Int, language: String, texts: [String: Text] = [:]) {
        self.textVersion = textVersion
        self.language = language
        self.texts = texts
    }

    /// Empty when there is no file, or one of another text version or language.
    static func load(from stateFolder: String, textVersion: Int, language: String) -> SearchTexts {
        var cache = SearchTexts(textVersion: textVersion, language: language)
        guard let records = RecordFile.load(stateFolder + "/" + fileName, format: format),
            let head = records.first, head.count == 2, String(decoding: head[0], as: UTF8.self) == String(textVersion),
            String(decoding: head[1], as: UTF8.self) == language
        else { return cache }
        for fields in records.dropFirst() where fields.count == 5 {
            cache.texts[String(decoding: fields[0], as: UTF8.self)] = Text(
                contentHash: String(decoding: fields[1], as: UTF8.self), offline: fields[2].first == 1,
                text: fields[3], bodyTerms: fields[4])
        }
        return cache
    }

    func save(to stateFolder: String) {
        var file = RecordFile(format: Self.format, capacity: texts.values.reduce(0) { $0 + 128 + $1.text.count + $1.bodyTerms.count })
        file.add([ArraySlice(String(textVersion).utf8), ArraySlice(language.utf8)])
        for usageID in texts.keys.sorted() {
            guard let text = texts[usageID] else { continue }
            file.add([ArraySlice(usageID.utf8), ArraySlice(text.contentHash.utf8), [text.offline ? 1 : 0], text.text, text.bodyTerms])
        }
        file.save(to: stateFolder + "/" + Self.fileName)
    }

    /// The recorded text of a block showing the page `contentHash`, if it is that page's.
    func text(of usageID: String, contentHash: String?, offline: Bool) -> Text? {
        guard let contentHash, let text = texts[usageID], text.contentHash == contentHash, text.offline == offline else { return nil }
        return text
    }
}
