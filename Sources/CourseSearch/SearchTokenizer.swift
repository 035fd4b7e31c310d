import Foundation

/// Splits text into search terms the same way everywhere: at build time for the index, in the
/// CLI for a query, and (in JavaScript, `BrowserSearch.script`) in the outline page.
///
/// Rules, applied to each Unicode scalar of the text on its own: compatibility decomposition
/// (NFKD), lower case, combining marks (Mn, Me) dropped, so `Café`, `CAFE` and `café` meet.
/// Letters, digits and spacing marks (Mc) make up words; anything else separates them. Han
/// ideographs, kana and Hangul syllables are one term per character, since those scripts do not
/// separate words with spaces. Per scalar, not per text: NFKD of a whole text only reorders the
/// combining marks that are dropped anyway, so the terms are the same, and each term keeps
/// the range of the original text it came from (for snippets).
public struct SearchTokenizer: Sendable {
    /// A term and where in the original text it came from.
    public struct Token: Sendable, Equatable {
        public var term: String
        public var range: Range<String.Index>
    }

    public let stopWords: Set<String>

    /// `language`: the course's language (`en`, `en-US`, `fr`…); English stop words are dropped
    /// when it is English or not given.
    public init(language: String) {
        stopWords = Self.usesEnglishStopWords(language) ? StopWords.english : []
    }

    public static func usesEnglishStopWords(_ language: String) -> Bool {
        let primary = language.split(separator: "-").first.map { $0.lowercased() } ?? ""
        return primary.isEmpty || primary == "en"
    }

    /// The terms of `text` in order, stop words left out.
    public func terms(_ text: String) -> [String] {
        tokens(text).map(\.term)
    }

    /// `terms(text)` joined by single spaces, as the index stores them, built in one buffer:
    /// the build tokenizes every page's text, and a `String` and a range per term, appended
    /// scalar by scalar, were most of the search step. A test holds it to `terms`.
    public func joinedTerms(_ text: String) -> String {
        var joined: [UInt8] = []
        joined.reserveCapacity(text.utf8.count)
        var termStart = 0
        func flush() {
            guard joined.count > termStart else { return }
            // Stop words are short, and a short `String` is made without allocating.
            if joined.count - termStart <= Self.longestStopWord, !stopWords.isEmpty,
                stopWords.contains(String(decoding: joined[termStart...], as: UTF8.self))
            {
                joined.removeSubrange(termStart...)
            }
            if joined.count > termStart { joined.append(UInt8(ascii: " ")) }
            termStart = joined.count
        }
        func append(_ scalar: Unicode.Scalar) {
            UTF8.encode(scalar) { joined.append($0) }
        }
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                switch UInt8(value) {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"): joined.append(UInt8(value))
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): joined.append(UInt8(value) + 0x20)
                default: flush()
                }
            } else if Self.isIdeographic(scalar) {
                flush()
                if Self.isHangulSyllable(scalar) {
                    append(scalar)
                } else {
                    for folded in Self.fold(scalar) where Self.isWordScalar(folded) { append(folded) }
                }
                flush()
            } else {
                var separated = false
                for folded in Self.fold(scalar) {
                    if Self.isWordScalar(folded) {
                        if separated { flush(); separated = false }
                        append(folded)
                    } else {
                        separated = true
                    }
                }
                if separated { flush() }
            }
        }
        flush()
        if joined.last == UInt8(ascii: " ") { joined.removeLast() }
        return String(decoding: joined, as: UTF8.self)
    }

    static let longestStopWord = StopWords.english.map(\.utf8.count).max() ?? 0

    /// The terms of `text` with their ranges, stop words left out.
    public func tokens(_ text: String) -> [Token] {
        Self.allTokens(text).filter { !stopWords.contains($0.term) }
    }

    /// Every term, stop words included.
    public static func allTokens(_ text: String) -> [Token] {
        var tokens: [Token] = []
        var current = ""
        var start: String.Index?
        var end = text.startIndex
        func flush() {
            if let start, !current.isEmpty { tokens.append(Token(term: current, range: start..<end)) }
            current = ""
            start = nil
        }
        let scalars = text.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            if scalar.isASCII {
                let value = scalar.value
                if (0x30...0x39).contains(value) || (0x61...0x7A).contains(value) {
                    if start == nil { start = index }
                    current.unicodeScalars.append(scalar)
                    end = next
                } else if (0x41...0x5A).contains(value) {
                    if start == nil { start = index }
                    current.unicodeScalars.append(Unicode.Scalar(value + 0x20)!)
                    end = next
                } else {
                    flush()
                }
            } else if isIdeographic(scalar) {
                flush()
                let term = isHangulSyllable(scalar) ? String(scalar) : String(String.UnicodeScalarView(fold(scalar).filter(isWordScalar)))
                if !term.isEmpty { tokens.append(Token(term: term, range: index..<next)) }
            } else {
                // A combining mark folds to nothing and stays inside its word.
                var separated = false
                for folded in fold(scalar) {
                    if isWordScalar(folded) {
                        if separated { flush(); separated = false }
                        if start == nil { start = index }
                        current.unicodeScalars.append(folded)
                        end = next
                    } else {
                        separated = true
                    }
                }
                if separated { flush() }
            }
            index = next
        }
        flush()
        return tokens
    }

    /// NFKD, lower case, without combining marks.
    static func fold(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        String(scalar).decomposedStringWithCompatibilityMapping.lowercased().unicodeScalars.filter { !isMark($0) }
    }

    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        let category = scalar.properties.generalCategory
        return category == .nonspacingMark || category == .enclosingMark
    }

    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .spacingMark:
            return true
        default:
            return false
        }
    }

    static func isHangulSyllable(_ scalar: Unicode.Scalar) -> Bool { (0xAC00...0xD7A3).contains(scalar.value) }

    /// Han (unified and compatibility ideographs, their extensions), Hiragana, Katakana (with
    /// the half-width forms) and Hangul syllables: the scripts searched one character at a time.
    static func isIdeographic(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9D,
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3FFFF,
            0xAC00...0xD7A3:
            return true
        default:
            return false
        }
    }
}
