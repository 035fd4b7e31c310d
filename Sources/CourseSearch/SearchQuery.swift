/// A query as the learner typed it, split into phrases: a word alone is a phrase of one term;
/// words in double quotes are one phrase, matched only as consecutive terms of one field.
/// A block matches when it holds every phrase.
public struct SearchQuery: Sendable, Equatable {
    public var phrases: [[String]]

    public init(_ text: String, tokenizer: SearchTokenizer) throws(SearchQueryError) {
        var phrases: [[String]] = []
        var seen = Set<[String]>()
        // Even pieces are outside quotes, odd ones inside; an unclosed quote runs to the end.
        for (number, piece) in text.split(separator: "\"", omittingEmptySubsequences: false).enumerated() {
            let terms = tokenizer.terms(String(piece))
            let found = number % 2 == 1 ? (terms.isEmpty ? [] : [terms]) : terms.map { [$0] }
            for phrase in found where seen.insert(phrase).inserted { phrases.append(phrase) }
        }
        guard !phrases.isEmpty else {
            let words = SearchTokenizer.allTokens(text)
            throw words.isEmpty ? .empty : .onlyStopWords(words.map(\.term))
        }
        self.phrases = phrases
    }

    /// Every term of the query.
    public var terms: Set<String> { Set(phrases.joined()) }
}

public enum SearchQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case onlyStopWords([String])

    public var description: String {
        switch self {
        case .empty:
            "the query has no words to search for"
        case .onlyStopWords(let words):
            "the query has only words too common to search for (\(words.joined(separator: ", "))); add a word that says what to find"
        }
    }
}

/// BM25 as SQLite's FTS5 computes it (`bm25()`), with these column weights, so the CLI (FTS5)
/// and the outline page (`BrowserSearch.script`) rank alike: per phrase, its IDF
/// `ln((N - n + 0.5) / (n + 0.5))` (1e-6 when not positive) times `f (k1 + 1) / (f + k1 (1 - b + b D / avgD))`,
/// where `f` sums the weights of the columns of each occurrence and `D` counts the terms of all
/// three fields.
public enum SearchRanking {
    public static let titleWeight = 5.0
    public static let pathWeight = 2.0
    public static let bodyWeight = 1.0
    public static let k1 = 1.2
    public static let b = 0.75
}
