@testable import BlockRenderer
import Foundation
import Testing
import TestSupport

@Suite struct HTMLTextTests {
    /// Escaping works on bytes: a markup character stays escaped whatever combines with it.
    @Test func everyMarkupByteIsEscaped() {
        #expect(HTMLText.escape("plain text, no markup") == "plain text, no markup")
        #expect(HTMLText.escape("a < b && \"c\" > d") == "a &lt; b &amp;&amp; &quot;c&quot; &gt; d")
        #expect(HTMLText.escape("<\u{338}x") == "&lt;\u{338}x", "a combining mark does not hide the <")
        #expect(HTMLText.escape("é<\u{1F600}>") == "é&lt;\u{1F600}&gt;")
    }

    /// Line breaks in caption text become <br> exactly as Foundation's replacement makes them.
    @Test func lineBreaksMatchFoundationsReplacement() {
        var random = SeededGenerator(state: 7)
        let pieces = ["a", "\n", "\r", "\r\n", "é", "\u{301}", " ", "<br>", "\u{1F600}"]
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
            #expect(HTMLText.breakingLines(text) == text.replacingOccurrences(of: "\n", with: "<br>"), "\(text.debugDescription)")
        }
    }
}
