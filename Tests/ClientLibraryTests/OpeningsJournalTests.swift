import ClientTarget
import Foundation
import FileSystem
import Manifest
import SyncClient
import Testing
import TestSupport

/// An opening is a line appended to a journal, not a rewrite of `target.json` (which at 92,000
/// blocks is 11 MB of JSON, read twice and written once per `open`): every read of the state
/// takes the journal in, and the next write of the state empties it.
@Suite struct OpeningsJournalTests {
    @Test func openingsAreJournaledTakenInByEveryReadAndFoldedInByTheNextWrite() throws {
        let (root, manifest) = try BlockLocationsTests.syncedDemo()
        let target = ClientTarget(root: DurableFile.folder(of: root))
        let folder = String(root.dropFirst(target.root.count + 1))
        let statePath = target.root + "/.coursepack-sync/target.json"
        let journal = target.root + "/.coursepack-sync/opened.tsv"
        let stateBefore = TestSupport.read(statePath)
        let offline = manifest.blocks.filter(\.isOffline).map(\.usageID)
        let (first, second) = (offline[3], offline[7])
        _ = try target.markOpened(first, at: Date(timeIntervalSince1970: 2_000_000_000))
        _ = try target.markOpened(second, at: Date(timeIntervalSince1970: 2_000_000_100))
        #expect(TestSupport.read(statePath) == stateBefore, "target.json is not rewritten by an opening")
        #expect(String(decoding: TestSupport.read(journal), as: UTF8.self).split(separator: "\n").count == 2)

        // A line cut short by a crash, and one naming a course this target does not have.
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data("elsewhere\t\(offline[9])\t2000000200.0\n\(folder)\t\(offline[11])\t20000".utf8))
        handle.closeFile()

        let read = try #require(try target.readState().courses[folder])
        #expect(read.lastUse[first] == 2_000_000_000 && read.lastUse[second] == 2_000_000_100)
        #expect(read.opened == [first: 2_000_000_000, second: 2_000_000_100], "the cut line and the other course's are dropped")
        #expect(try target.pendingCompletions(inCourseFolder: folder) == [first, second].sorted())

        try target.markCompletionsSent([first], inCourseFolder: folder)
        #expect(!FileManager.default.fileExists(atPath: journal), "a write of the state folds the journal in")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(statePath))) as? [String: Any])
        let record = try #require((written["courses"] as? [String: Any])?[folder] as? [String: Any])
        #expect((record["opened"] as? [String: Double]) == [first: 2_000_000_000, second: 2_000_000_100])
        #expect(try target.pendingCompletions(inCourseFolder: folder) == [second])
    }

    @Test func aLongJournalIsFoldedInByTheOpeningThatMakesItLong() throws {
        let (root, manifest) = try BlockLocationsTests.syncedDemo()
        let target = ClientTarget(root: DurableFile.folder(of: root))
        let journal = target.root + "/.coursepack-sync/opened.tsv"
        let filler = String(repeating: "gone\tblock-v1:x+y+z+type@html+block@filler\t1.0\n", count: 6_000)
        try TestSupport.write(["opened.tsv": filler], under: target.root + "/.coursepack-sync")
        let id = try #require(manifest.blocks.first { $0.isOffline }).usageID
        _ = try target.markOpened(id, at: Date(timeIntervalSince1970: 2_000_000_000))
        #expect(!FileManager.default.fileExists(atPath: journal))
        let folder = String(root.dropFirst(target.root.count + 1))
        #expect(try target.readState().courses[folder]?.opened?[id] == 2_000_000_000)
    }
}
