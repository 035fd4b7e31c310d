/// Finds course paths (`/static/…`, `/asset-v1:…`, `/c4x/…`, `/jump_to_id/…`) written inside
/// other text: JavaScript strings, JSON in `data-*` attributes, event handlers.
public enum EmbeddedScanner {
    static let markers = ["/static/", "/asset-v1:", "/c4x/", "/jump_to_id/", "/jump_to/"]

    public static func references(in bytes: [UInt8], range: Range<Int>) -> [Reference] {
        var found: [Reference] = []
        var i = range.lowerBound
        while i < range.upperBound {
            guard bytes[i] == UInt8(ascii: "/"), let marker = markers.first(where: { bytes.matches($0, at: i) }) else {
                i += 1
                continue
            }
            // Only a path that starts a value counts; "https://host/static/x" is someone else's URL.
            if i > range.lowerBound, !isDelimiter(bytes, before: i) {
                i += marker.utf8.count
                continue
            }
            var end = i + marker.utf8.count
            while end < range.upperBound, !isTerminator(bytes, at: end) { end += 1 }
            if end > i + marker.utf8.count {
                found.append(Reference(range: i..<end, url: CharacterReferences.decode(bytes[i..<end]), context: .embedded))
            }
            i = end
        }
        return found
    }

    private static func isDelimiter(_ bytes: [UInt8], before i: Int) -> Bool {
        let b = bytes[i - 1]
        if b.isHTMLSpace { return true }
        if "\"'`(=,[{;:>".utf8.contains(b) { return true }
        return false
    }

    private static func isTerminator(_ bytes: [UInt8], at i: Int) -> Bool {
        let b = bytes[i]
        if b.isHTMLSpace || "\"'`)<>\\".utf8.contains(b) { return true }
        return bytes.matches("&quot;", at: i) || bytes.matches("&#39;", at: i)
    }
}
