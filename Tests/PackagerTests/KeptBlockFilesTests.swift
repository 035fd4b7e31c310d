import Foundation
import Testing
import TestSupport

@testable import Packager

/// The block definition files a rebuild takes from the state folder (`block-files.bin`) rather
/// than from the course export: only while a file's whole stamp is unchanged, only for the
/// export folder they were read from, and never when the state file is damaged.
@Suite struct KeptBlockFilesTests {
    private func stateFile(_ out: String) -> String {
        BuildOptions.defaultStateFolder(forOutput: out) + "/" + KeptBlockFiles.fileName
    }

    /// Settled files are not read again; one rewritten with as many bytes and its mtime put back
    /// has another ctime, so it is read, and its page shows the new text.
    @Test func aBlockFileEditedWithItsModificationTimePutBackIsReadAgain() throws {
        let course = try fourBlockCourse()
        let old = Date(timeIntervalSince1970: 1_600_000_000)
        let path = course + "/html/b.xml"
        let (out, first) = try build(course, now: TestSupport.clockAhead)
        #expect(first.counts.blockFilesRead == 7, "\(first.counts)")
        #expect(FileManager.default.fileExists(atPath: stateFile(out)))
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        let (_, touched) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(touched.counts.blockFilesRead == 1, "only the touched file: \(touched.counts)")

        let same = try rewriteKeepingSizeAndTime(path, replacing: "Block b", with: "Block Q", modified: old)
        let (_, rebuilt) = try build(course, into: out, publishedAt: "2026-12-02T00:00:00Z", now: TestSupport.clockAhead)
        #expect(rebuilt.counts.blockFilesRead == 1 && rebuilt.counts.built == 1, "\(rebuilt.counts)")
        let entry = try #require(try manifest(in: out).blocks.first { $0.usageID.hasSuffix("@b") })
        #expect(entry.displayName == "Block Q")

        // Edited again, so the next build must not take what the last one kept.
        try TestSupport.writeBytes(Array(String(decoding: same, as: UTF8.self).replacingOccurrences(of: "Block Q", with: "Block R").utf8), to: path)
        let (_, again) = try build(course, into: out, publishedAt: "2026-12-03T00:00:00Z", now: TestSupport.clockAhead)
        #expect(again.counts.blockFilesRead == 1)
        #expect(try manifest(in: out).blocks.first { $0.usageID.hasSuffix("@b") }?.displayName == "Block R")
    }

    /// A file changed within `TreeStamp.settleMargin` of the build that read it may change again
    /// in the same tick of the clock: it is read again however its stamp looks.
    @Test func aFileChangedJustBeforeTheBuildIsReadAgain() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        try TestSupport.writeBytes(Array("<p>Block c, edited</p>".utf8), to: course + "/html/c.html")
        let (_, rebuilt) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(!rebuilt.inputsUnchanged && rebuilt.counts.built == 1)
        #expect(rebuilt.counts.blockFilesRead == 7, "every file was written within two seconds: \(rebuilt.counts)")
    }

    /// A flipped byte in the state file, or a file cut short, costs reading the course again:
    /// the rebuild's archives equal a fresh build's.
    @Test func aDamagedStateFileIsNotUsed() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course, now: TestSupport.clockAhead)
        let kept = TestSupport.read(stateFile(out))
        let damages: [([UInt8]) -> [UInt8]] = [
            { var bytes = $0; bytes[bytes.count / 2] ^= 0x20; return bytes },
            { Array($0.dropLast(9)) },
        ]
        for (turn, damage) in damages.enumerated() {
            // An edit outside the definition files, so the rebuild loads the course.
            try TestSupport.writeBytes(Array("<p>Block c, edit \(turn)</p>".utf8), to: course + "/html/c.html")
            try TestSupport.writeBytes(damage(kept), to: stateFile(out))
            let (_, rebuilt) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
            #expect(!rebuilt.inputsUnchanged && rebuilt.counts.blockFilesRead == 7, "\(rebuilt.counts)")
            let (fresh, _) = try build(course, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
            #expect(try archiveBytes(out) == archiveBytes(fresh))
        }
    }

    /// Files kept from one export folder are not taken for another's, even with every stamp
    /// alike (the folder renamed: inode numbers repeat across file systems): all are read.
    @Test func filesKeptForAnotherExportFolderAreNotUsed() throws {
        let course = try fourBlockCourse()
        let out = TestSupport.temporaryFolder("out")
        _ = try build(course, into: out, now: TestSupport.clockAhead)
        let moved = course + "-moved"
        try FileManager.default.moveItem(atPath: course, toPath: moved)
        let (_, other) = try build(moved, into: out, publishedAt: "2026-12-01T00:00:00Z", now: TestSupport.clockAhead)
        #expect(other.counts.blockFilesRead == 7, "\(other.counts)")
        try TestSupport.writeBytes(Array("<p>Block c, edited</p>".utf8), to: moved + "/html/c.html")
        let (_, again) = try build(moved, into: out, publishedAt: "2026-12-02T00:00:00Z", now: TestSupport.clockAhead)
        #expect(!again.inputsUnchanged && again.counts.blockFilesRead == 0, "kept for the new folder: \(again.counts)")
    }
}
