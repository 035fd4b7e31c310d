import Foundation
@testable import IncrementalBuild
import Testing
import TestSupport

@Suite struct TreeStampTests {
    /// Big folders are stat'ed on several threads; the digest must not depend on how many.
    @Test func theDigestIsTheSameOnOneThreadOrTwoAndSeesEveryChange() throws {
        let root = TestSupport.temporaryFolder("stamp")
        var files: [String: String] = [:]
        for index in 0..<1200 { files["many/f\(index).txt"] = "file \(index)" }
        files["top.txt"] = "top"
        try TestSupport.write(files, under: root)
        let one = try #require(TreeStamp.of(root, workers: 1))
        let two = try #require(TreeStamp.of(root, workers: 2))
        #expect(one.digest == two.digest)
        #expect(!one.settled, "files written just now are not trusted yet")

        try TestSupport.write(["many/f777.txt": "file 778"], under: root)
        #expect(try #require(TreeStamp.of(root, workers: 2)).digest != one.digest, "a rewrite of the same size shows")
        let afterWrite = try #require(TreeStamp.of(root, workers: 2)).digest
        try FileManager.default.removeItem(atPath: root + "/many/f3.txt")
        #expect(try #require(TreeStamp.of(root, workers: 2)).digest != afterWrite, "a removal shows")
    }

    /// Entries are ordered by their bytes, as `lexicographicallyPrecedes` orders them: the
    /// digest of a folder must not change with the comparison that sorts it.
    @Test func namesSortInByteOrder() {
        var random = SeededGenerator(state: 7)
        let alphabet: [UInt8] = [0, 1, 0x2F, 0x41, 0x61, 0x62, 0x7F, 0x80, 0xC3, 0xA9, 0xFF]
        for _ in 0..<20_000 {
            let left = (0..<Int.random(in: 0...4, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            let right = Bool.random(using: &random) ? left + [alphabet.randomElement(using: &random)!]
                : (0..<Int.random(in: 0...4, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            #expect(TreeStamp.bytesPrecede(left, right) == left.lexicographicallyPrecedes(right), "\(left) \(right)")
            #expect(TreeStamp.bytesPrecede(right, left) == right.lexicographicallyPrecedes(left), "\(right) \(left)")
        }
    }
}
