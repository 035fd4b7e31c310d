import CourseSearch
import Testing
import TestSupport

/// Whitespace is collapsed on UTF-8 bytes for speed; the result must be the scalar-by-scalar
/// rule's (Unicode White_Space and no-break space), whatever the text.
@Suite struct VisibleTextTests {
    /// The rule as it was first written: every scalar looked up.
    static func collapsedScalarByScalar(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || scalar == "\u{00A0}" {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(" ") }
                pendingSpace = false
                out.append(scalar)
            }
        }
        return String(out)
    }

    @Test func collapsingAgreesWithTheScalarRuleOnRandomText() {
        let pieces: [String] = [
            " ", "\t", "\n", "\r\n", "\u{0B}", "\u{0C}", "\u{1C}", "\u{1F}", "\u{85}", "\u{A0}", "\u{1680}", "\u{180E}", "\u{2000}",
            "\u{200A}", "\u{200B}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}", "\u{3000}", "\u{FEFF}", "a", "Z", "é", "e\u{301}",
            "日本", "🎓", "\u{0}", "x y", "<p>", "&amp;",
        ]
        var random = SeededGenerator(state: 41)
        for _ in 0..<4000 {
            let text = (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            #expect(VisibleText.collapsingWhitespace(text).unicodeScalars.elementsEqual(Self.collapsedScalarByScalar(text).unicodeScalars), "\(Array(text.unicodeScalars))")
        }
        #expect(VisibleText.collapsingWhitespace("  a \u{3000}\u{A0} b\t") == "a b")
    }
}
