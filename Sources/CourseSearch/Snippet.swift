/// A short excerpt of a block's text around the first place a query term occurs.
public enum Snippet {
    public static func make(text: String, terms: Set<String>, tokenizer: SearchTokenizer, length: Int = 160) -> String {
        let tokens = tokenizer.tokens(text)
        guard let hit = tokens.first(where: { terms.contains($0.term) }) else {
            return shortened(text, from: text.startIndex, length: length)
        }
        // A third of the room before the term, the rest after it.
        let before = text.distance(from: text.startIndex, to: hit.range.lowerBound)
        var start = text.index(hit.range.lowerBound, offsetBy: -min(before, length / 3))
        // Start at a word, not inside one.
        if start > text.startIndex {
            if let space = text[start..<hit.range.lowerBound].firstIndex(of: " ") { start = text.index(after: space) }
        }
        return shortened(text, from: start, length: length)
    }

    static func shortened(_ text: String, from start: String.Index, length: Int) -> String {
        let rest = text[start...]
        var excerpt = String(rest.prefix(length))
        if excerpt.count < rest.count, let space = excerpt.lastIndex(of: " ") { excerpt = String(excerpt[..<space]) + " …" }
        return (start > text.startIndex ? "… " : "") + excerpt
    }
}
