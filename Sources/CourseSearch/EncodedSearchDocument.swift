import Manifest

/// A document as `index.js` holds it, with its two long fields (the page's text and its terms)
/// already written as JSON string literals. A rebuild keeps those literals of a block whose
/// page did not change and writes only the short fields (name, place, page) anew, so an edit
/// neither decodes nor re-encodes the whole index.
public struct EncodedSearchDocument: Sendable {
    public let usageID: String
    public let type: String
    public let title: String
    public let path: [String]
    public let page: String?
    let titleTerms: String
    let pathTerms: String
    /// `text` and `body_terms` as JSON string literals, quotes included.
    public let textLiteral: ArraySlice<UInt8>
    public let bodyTermsLiteral: ArraySlice<UInt8>

    public init(_ document: SearchDocument) {
        self.init(
            usageID: document.usageID, type: document.type, title: document.title, path: document.path,
            page: document.page, titleTerms: document.titleTerms, pathTerms: document.pathTerms,
            textLiteral: JSONString.literal(document.text)[...], bodyTermsLiteral: JSONString.literal(document.bodyTerms)[...])
    }

    /// A block whose text is known (as the literals a previous build wrote) under a name,
    /// place and page given now; their terms are taken with `tokenizer`.
    public init(
        usageID: String, type: String, title: String, path: [String], page: String?,
        textLiteral: ArraySlice<UInt8>, bodyTermsLiteral: ArraySlice<UInt8>, tokenizer: SearchTokenizer
    ) {
        self.init(
            usageID: usageID, type: type, title: title, path: path, page: page,
            titleTerms: tokenizer.joinedTerms(title),
            pathTerms: tokenizer.joinedTerms(path.joined(separator: " ")),
            textLiteral: textLiteral, bodyTermsLiteral: bodyTermsLiteral)
    }

    private init(
        usageID: String, type: String, title: String, path: [String], page: String?, titleTerms: String,
        pathTerms: String, textLiteral: ArraySlice<UInt8>, bodyTermsLiteral: ArraySlice<UInt8>
    ) {
        self.usageID = usageID
        self.type = type
        self.title = title
        self.path = path
        self.page = page
        self.titleTerms = titleTerms
        self.pathTerms = pathTerms
        self.textLiteral = textLiteral
        self.bodyTermsLiteral = bodyTermsLiteral
    }

    /// The number of bytes `append` writes, without writing them: the search step cuts its
    /// parts by these lengths.
    public var encodedCount: Int {
        // `{` and `}`, the keys with their quotes, colons and commas.
        var count = 2 + keyBytes(page != nil)
        count += bodyTermsLiteral.count + textLiteral.count
        if let page { count += JSONString.encodedCount(page) }
        count += 2 + max(0, path.count - 1)
        for part in path { count += JSONString.encodedCount(part) }
        for field in [pathTerms, title, titleTerms, type, usageID] { count += JSONString.encodedCount(field) }
        return count
    }

    /// The keys `append` writes: each quoted, followed by a colon, all but the first after a comma.
    private func keyBytes(_ withPage: Bool) -> Int {
        let keys: [StaticString] = ["body_terms", "path", "path_terms", "text", "title", "title_terms", "type", "usage_id"]
        let names = keys.reduce(0) { $0 + $1.utf8CodeUnitCount + 3 } + (withPage ? "page".utf8.count + 3 : 0)
        return names + (keys.count + (withPage ? 1 : 0) - 1)
    }

    /// The object as JSONEncoder writes a `SearchDocument` (sorted keys, no spaces, an absent
    /// page left out).
    public func append(to bytes: inout [UInt8]) {
        func key(_ name: StaticString, first: Bool = false) {
            if !first { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        bytes.append(UInt8(ascii: "{"))
        key("body_terms", first: true)
        bytes.append(contentsOf: bodyTermsLiteral)
        if let page {
            key("page")
            JSONString.append(page, to: &bytes)
        }
        key("path")
        bytes.append(UInt8(ascii: "["))
        for (index, part) in path.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONString.append(part, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        key("path_terms")
        JSONString.append(pathTerms, to: &bytes)
        key("text")
        bytes.append(contentsOf: textLiteral)
        key("title")
        JSONString.append(title, to: &bytes)
        key("title_terms")
        JSONString.append(titleTerms, to: &bytes)
        key("type")
        JSONString.append(type, to: &bytes)
        key("usage_id")
        JSONString.append(usageID, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// The text, body terms and usage id literals (quotes included) of one whole document as
    /// `append` wrote it, read back from its bytes; nil for bytes of any other shape: part of a
    /// document, two of them, or anything after its closing brace.
    public static func literals(
        in document: ArraySlice<UInt8>
    ) -> (text: ArraySlice<UInt8>, bodyTerms: ArraySlice<UInt8>, usageID: ArraySlice<UInt8>)? {
        var position = document.startIndex
        func expect(_ text: StaticString) -> Bool {
            let expected = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            guard document.endIndex - position >= expected.count, document[position..<position + expected.count].elementsEqual(expected)
            else { return false }
            position += expected.count
            return true
        }
        // A string literal from its opening quote through its closing one.
        func literal() -> ArraySlice<UInt8>? {
            guard position < document.endIndex, document[position] == UInt8(ascii: "\"") else { return nil }
            let start = position
            position += 1
            while position < document.endIndex {
                switch document[position] {
                case UInt8(ascii: "\""):
                    position += 1
                    return document[start..<position]
                case UInt8(ascii: "\\"):
                    position += 2
                default:
                    position += 1
                }
            }
            return nil
        }
        guard expect("{\"body_terms\":"), let bodyTerms = literal() else { return nil }
        if expect(",\"page\":") { guard literal() != nil else { return nil } }
        guard expect(",\"path\":[") else { return nil }
        if !expect("]") {
            repeat {
                guard literal() != nil else { return nil }
            } while expect(",")
            guard expect("]") else { return nil }
        }
        guard expect(",\"path_terms\":"), literal() != nil, expect(",\"text\":"), let text = literal(),
            expect(",\"title\":"), literal() != nil, expect(",\"title_terms\":"), literal() != nil,
            expect(",\"type\":"), literal() != nil, expect(",\"usage_id\":"), let usageID = literal(),
            expect("}"), position == document.endIndex
        else { return nil }
        return (text, bodyTerms, usageID)
    }
}
