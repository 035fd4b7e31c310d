import Foundation
import IncrementalBuild
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

    /// A cancelled walk gives no stamp, whether it was cancelled before it began or while it
    /// ran, and stops early: a cancellation from the walk's own listing of the big folder ends
    /// it before the folders after it are entered.
    @Test func aCancelledWalkGivesNoStampAndStopsEarly() throws {
        let root = TestSupport.temporaryFolder("stamp-cancel")
        var files: [String: String] = [:]
        for index in 0..<600 { files["a/f\(index).txt"] = "file \(index)" }
        for index in 0..<600 { files["b/f\(index).txt"] = "file \(index)" }
        try TestSupport.write(files, under: root)
        #expect(TreeStamp.of(root, workers: 2, cancellation: TreeStamp.Cancellation()) != nil)

        let before = TreeStamp.Cancellation()
        before.cancel()
        #expect(TreeStamp.of(root, workers: 2, cancellation: before) == nil)

        let during = TreeStamp.Cancellation()
        var seenInB = 0
        let stamp = TreeStamp.of(root, workers: 1, cancellation: during) { name, depth, _ in
            if depth == 2, name == Array("f10.txt".utf8) { during.cancel() }
            if depth == 1, name == Array("b".utf8) { seenInB += 1 }
            return true
        }
        #expect(stamp == nil)
        #expect(seenInB == 0, "the walk went on into b/ after it was cancelled in a/")
    }
}
