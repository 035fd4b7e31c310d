/// Finds `url(...)` and `@import "..."` references in CSS, skipping comments.
public enum CSSScanner {
    public static func references(in bytes: [UInt8], range: Range<Int>? = nil) -> [Reference] {
        let range = range ?? 0..<bytes.count
        var found: [Reference] = []
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            if bytes.matches("/*", at: i) {
                i = (bytes.find("*/", from: i + 2).map { $0 + 2 }) ?? end
                continue
            }
            if bytes.matchesCaseInsensitive("url(", at: i), i + 4 <= end {
                i += 4
                while i < end, bytes[i].isHTMLSpace { i += 1 }
                let (quote, bodyStart) = openingQuote(bytes, at: i, end: end)
                var j = bodyStart
                if let quote {
                    while j < end, !bytes.matches(quote, at: j) { j += 1 }
                } else {
                    while j < end, bytes[j] != UInt8(ascii: ")") { j += 1 }
                }
                let url = bytes.trimmed(bodyStart..<min(j, end))
                if !url.isEmpty {
                    found.append(Reference(range: url, url: CharacterReferences.decode(bytes[url]), context: .css))
                }
                i = j
                continue
            }
            if bytes.matchesCaseInsensitive("@import", at: i) {
                i += 7
                while i < end, bytes[i].isHTMLSpace { i += 1 }
                let (quote, bodyStart) = openingQuote(bytes, at: i, end: end)
                if let quote {
                    var j = bodyStart
                    while j < end, !bytes.matches(quote, at: j) { j += 1 }
                    if j > bodyStart {
                        found.append(Reference(range: bodyStart..<j, url: CharacterReferences.decode(bytes[bodyStart..<j]), context: .css))
                    }
                    i = j
                }
                continue
            }
            i += 1
        }
        return found
    }

    /// A quote opening a CSS string, which inside an HTML attribute may be written `&quot;`.
    private static func openingQuote(_ bytes: [UInt8], at i: Int, end: Int) -> (String?, Int) {
        guard i < end else { return (nil, i) }
        if bytes[i] == UInt8(ascii: "\"") { return ("\"", i + 1) }
        if bytes[i] == UInt8(ascii: "'") { return ("'", i + 1) }
        if bytes.matches("&quot;", at: i) { return ("&quot;", i + 6) }
        if bytes.matches("&#39;", at: i) { return ("&#39;", i + 5) }
        return (nil, i)
    }
}
