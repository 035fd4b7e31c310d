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
}
