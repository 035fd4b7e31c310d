import CourseSearch
import Foundation
import Testing
import TestSupport

@Suite struct TokenizerTests {
    let english = SearchTokenizer(language: "en")
    let french = SearchTokenizer(language: "fr")

    @Test func accentsAndCaseFoldAway() {
        #expect(english.terms("Café CAFÉ cafe\u{0301}s naïve Ångström") == ["cafe", "cafe", "cafes", "naive", "angstrom"])
        // Compatibility forms: the ligature and full-width letters are their plain letters.
        #expect(english.terms("ﬁle ＡＢＣ") == ["file", "abc"])
    }

    @Test func punctuationAndSymbolsSeparateWordsDigitsDoNot() {
        #expect(english.terms("O(n log n)-time, x86_64; 3.14") == ["o", "n", "log", "n", "time", "x86", "64", "3", "14"])
    }

    @Test func ideographsKanaAndHangulAreOneTermPerCharacter() {
        #expect(english.terms("日本語を学ぶ") == ["日", "本", "語", "を", "学", "ふ"])
        #expect(english.terms("한국어 수업") == ["한", "국", "어", "수", "업"])
        // Mixed with Latin words.
        #expect(english.terms("Python入門") == ["python", "入", "門"])
    }

    @Test func englishStopWordsOnlyForEnglishOrUnsetLanguage() {
        #expect(english.terms("The art of the deal") == ["art", "deal"])
        #expect(SearchTokenizer(language: "").terms("the art") == ["art"])
        #expect(SearchTokenizer(language: "en-GB").terms("the art") == ["art"])
        #expect(french.terms("the art") == ["the", "art"])
    }

    /// The index's joined terms are built another way than `terms`, in one buffer: they must
    /// be the same for any text. Random runs of ASCII, accented Latin, combining marks,
    /// ligatures and full-width forms, Greek, Cyrillic, Arabic, Devanagari (spacing marks), Han,
    /// kana, Hangul, emoji and stop words, in every language setting; then real course text.
    @Test func joinedTermsAreTheTermsJoinedForAnyText() throws {
        let pieces = [
            "the", "The", "AND", "of", "a", " ", "  ", "\n", "\t", ",", ".", "-", "_", "'", "\"", "(", "x86_64", "3.14", "Café",
            "cafe\u{0301}", "naïve", "Ångström", "ﬁle", "ＡＢＣ", "Straße", "İstanbul", "ǅ", "Ωμέγα", "Привет", "مرحبا", "हिन्दी",
            "日本語", "を", "ｶﾀｶﾅ", "한국어", "\u{0301}", "\u{20DD}", "🎓", "👩‍🔬", "Ⅻ", "½", "²", "\u{00A0}", "\u{200B}", "\u{FEFF}",
        ]
        var random = SeededGenerator(state: 41)
        for tokenizer in [english, french] {
            for _ in 0..<2000 {
                let text = (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
                // By bytes: `String`'s `==` takes canonically equivalent texts for equal.
                #expect(Array(tokenizer.joinedTerms(text).utf8) == Array(tokenizer.terms(text).joined(separator: " ").utf8), "\(text.debugDescription)")
            }
        }
        let demo = TestSupport.demoCourse + "/html"
        var compared = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: demo).sorted() where name.hasSuffix(".html") {
            let text = try String(contentsOfFile: demo + "/" + name, encoding: .utf8)
            #expect(Array(english.joinedTerms(text).utf8) == Array(english.terms(text).joined(separator: " ").utf8), "\(name)")
            compared += 1
        }
        #expect(compared > 50)
    }

    @Test func tokensKeepTheirPlaceInTheOriginalText() {
        let text = "Le Café, déjà."
        let tokens = french.tokens(text)
        #expect(tokens.map { String(text[$0.range]) } == ["Le", "Café", "déjà"])
    }

    @Test func queriesSplitIntoWordsAndQuotedPhrases() throws {
        let query = try SearchQuery(#"binary "search tree" the Tree"#, tokenizer: english)
        #expect(query.phrases == [["binary"], ["search", "tree"], ["tree"]])
        #expect(throws: SearchQueryError.empty) { try SearchQuery("  ?! ", tokenizer: english) }
        #expect(throws: SearchQueryError.onlyStopWords(["the", "of", "a"])) { try SearchQuery("The of \"a\"", tokenizer: english) }
    }

    @Test func visibleTextLeavesOutMarkupScriptsAndControls() {
        let html = """
            <h2>Intro</h2><p>W<b>or</b>d &amp; <em>more</em>&nbsp;text</p><script>var secret = "hidden";</script>
            <style>p { color: red }</style><!-- a comment --><button>Submit</button><p>a < b</p>
            """
        #expect(VisibleText.of(html: html) == "Intro Word & more text a < b")
    }

    @Test func snippetsStartNearTheFirstMatch() {
        let text = String(repeating: "filler words here ", count: 20) + "the needle is here " + String(repeating: "and more after ", count: 20)
        let snippet = Snippet.make(text: text, terms: ["needle"], tokenizer: english)
        #expect(snippet.hasPrefix("… "))
        #expect(snippet.contains("needle"))
        #expect(snippet.count < 180)
    }
}
