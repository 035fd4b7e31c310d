/// Words left out of the index and of queries.
public enum StopWords {
    /// Lucene's English stop set (the `EnglishAnalyzer` default): articles, copulas and
    /// connectives only. Short on purpose: question words (`how`, `why`, `what`) and negations
    /// beyond `no`/`not` carry meaning in course text, and a longer list would make phrase
    /// queries match across more missing words.
    public static let english: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
        "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
    ]
}
