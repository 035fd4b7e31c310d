import FileSystem
import Testing
import TestSupport

/// Byte-wise search and order over the names of big folders, checked against the generic
/// operations on byte arrays they replace.
@Suite struct ByteOrderTests {
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

    /// Entries are ordered by their bytes, as `lexicographicallyPrecedes` orders them: a
    /// folder's stamp must not change with the comparison that sorts it.
    @Test func namesSortInByteOrder() {
        var random = SeededGenerator(state: 7)
        let alphabet: [UInt8] = [0, 1, 0x2F, 0x41, 0x61, 0x62, 0x7F, 0x80, 0xC3, 0xA9, 0xFF]
        for _ in 0..<20_000 {
            let left = (0..<Int.random(in: 0...4, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            let right = Bool.random(using: &random) ? left + [alphabet.randomElement(using: &random)!]
                : (0..<Int.random(in: 0...4, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            #expect(ByteOrder.precedes(left, right) == left.lexicographicallyPrecedes(right), "\(left) \(right)")
            #expect(ByteOrder.precedes(right, left) == right.lexicographicallyPrecedes(left), "\(right) \(left)")
        }
    }
}
