import FileSystem
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

    /// What a walk collects is what `lstat` says of each plain file, and only of those: not a
    /// link, not a second name of a file, not a file reached through a linked folder; names that
    /// differ only in how an accent is encoded are two files. Big folders are stat'ed on two
    /// threads. Without being asked, a walk collects nothing.
    @Test func theWalkCollectsEachPlainFileAsLstatSeesIt() throws {
        let root = TestSupport.temporaryFolder("stamp-plain")
        var files: [String: String] = ["top.txt": "top", "deep/er/leaf.txt": "leaf", "linked/inside.txt": "inside"]
        for index in 0..<600 { files["many/f\(index).txt"] = "file \(index)" }
        try TestSupport.write(files, under: root)
        // Equal as `String`s (a dictionary literal would refuse them), two names on the disk.
        let accented = ["caf\u{E9}.txt", "cafe\u{301}.txt"]
        for (index, name) in accented.enumerated() {
            #expect(FileManager.default.createFile(atPath: root + "/" + name, contents: Data("accent \(index)".utf8)))
        }
        #expect(link(root + "/top.txt", root + "/second-name.txt") == 0)
        #expect(symlink(root + "/deep/er/leaf.txt", root + "/link.txt") == 0)
        #expect(symlink(root + "/linked", root + "/folder-link") == 0)

        let walked = try #require(TreeStamp.of(root, workers: 2, collectsPlainFiles: true))
        let plain = files.keys.filter { $0 != "top.txt" } + accented  // top.txt now has two names
        let entries = walked.plainFiles.entries
        #expect(Set(entries.map(\.path)) == Set(plain.map { Array($0.utf8) }))
        #expect(entries.count == 604)
        let stamps = try #require(walked.plainFiles.rooted(at: root).under(root))
        for name in plain {
            var info = stat()
            #expect(lstat(root + "/" + name, &info) == 0)
            #expect(stamps.stamp(of: name) == FileStamp(info), "\(name)")
        }
        #expect(stamps.stamp(of: "top.txt") == nil && stamps.stamp(of: "link.txt") == nil && stamps.stamp(of: "folder-link/inside.txt") == nil)
        #expect(stamps.stamp(of: "many") == nil && stamps.stamp(of: "many/f6000.txt") == nil)
        // The folder's own view: paths relative to it, nothing outside it.
        let many = try #require(walked.plainFiles.rooted(at: root).under(root + "/many"))
        #expect(many.stamp(of: "f12.txt") == stamps.stamp(of: "many/f12.txt") && many.stamp(of: "f12.txt") != nil)
        #expect(many.stamp(of: "many/f12.txt") == nil && many.stamp(of: "../top.txt") == nil)
        #expect(walked.plainFiles.rooted(at: root).under(root + "/man") != nil)
        #expect(walked.plainFiles.rooted(at: root).under(root + "/man")?.stamp(of: "y/f12.txt") == nil)
        #expect(walked.plainFiles.rooted(at: root).under(root + "x") == nil, "a sibling whose name starts with the root's")
        let plainWalk = try #require(TreeStamp.of(root, workers: 2))
        #expect(plainWalk.plainFiles.count == 0)
        #expect(plainWalk.digest == walked.digest, "collecting does not change the digest")
    }
}
