import FileSystem
import Testing
import TestSupport

/// `containsUTF8` finds a run of bytes as a search of the byte arrays does: the builds tell
/// temporary and staged files by it, in folders of 100,000 names.
@Suite struct UTF8SearchTests {
    static func reference(_ text: [UInt8], _ part: [UInt8]) -> Bool {
        part.isEmpty || (text.count >= part.count && (0...(text.count - part.count)).contains { Array(text[$0..<($0 + part.count)]) == part })
    }

    @Test func findsExactlyTheBytesAnArraySearchFinds() {
        var random = SeededGenerator(state: 11)
        let pieces = [".", "tmp", "-", ".tmp-", "a", "é", "e\u{301}", "🎓", "staged", "\u{0}"]
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...6, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let part = (0..<Int.random(in: 0...2, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            #expect(text.containsUTF8(part) == Self.reference(Array(text.utf8), Array(part.utf8)), "\(Array(text.utf8)) \(Array(part.utf8))")
        }
        // By bytes, not by canonical equivalence: "é" precomposed is not "e" and an accent.
        #expect(!"caf\u{E9}".containsUTF8("e\u{301}") && "archive.zip.tmp-1".containsUTF8(".tmp-"))
    }
}
