@testable import ClientTarget
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

        // The next opening after the cut line is read whole.
        _ = try target.markOpened(offline[13], at: Date(timeIntervalSince1970: 2_000_000_050))
        var read = try #require(try target.readState().courses[folder])
        #expect(read.opened?[offline[13]] == 2_000_000_050, "an opening after a cut line is kept")
        read.opened?[offline[13]] = nil
        read.lastUse[offline[13]] = nil
        #expect(read.lastUse[first] == 2_000_000_000 && read.lastUse[second] == 2_000_000_100)
        #expect(read.opened == [first: 2_000_000_000, second: 2_000_000_100], "the cut line and the other course's are dropped")
        #expect(try target.pendingCompletions(inCourseFolder: folder) == [first, second, offline[13]].sorted())

        try target.markCompletionsSent([first], inCourseFolder: folder)
        #expect(!FileManager.default.fileExists(atPath: journal), "a write of the state folds the journal in")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(statePath))) as? [String: Any])
        let record = try #require((written["courses"] as? [String: Any])?[folder] as? [String: Any])
        #expect((record["opened"] as? [String: Double]) == [first: 2_000_000_000, second: 2_000_000_100, offline[13]: 2_000_000_050])
        #expect(try target.pendingCompletions(inCourseFolder: folder) == [second, offline[13]].sorted())
    }

    /// A sync saves the state it read when it began, with what was opened meanwhile: the
    /// openings (the learner's progress, for the LMS) as well as the last uses.
    @Test func aSyncKeepsTheOpeningsMadeWhileItRan() throws {
        let (root, manifest) = try BlockLocationsTests.syncedDemo()
        let target = ClientTarget(root: DurableFile.folder(of: root))
        let folder = String(root.dropFirst(target.root.count + 1))
        let readBySync = try target.readState()
        let ids = manifest.blocks.filter(\.isOffline).prefix(5).map(\.usageID)
        for (number, id) in ids.enumerated() { _ = try target.markOpened(id, at: Date(timeIntervalSince1970: 2_000_000_000 + Double(number))) }
        try target.saveLastUse(state: readBySync)
        let saved = try #require(try target.readState().courses[folder])
        #expect(Set(saved.opened?.keys.map { $0 } ?? []) == Set(ids))
        #expect(ids.allSatisfy { saved.lastUse[$0] ?? 0 >= 2_000_000_000 })
    }

    /// Only the courses target.json lists are looked in: a folder left on disk (a replaced
    /// course cut short, a copy) is not one, and a FIFO where the journal goes is refused at once.
    @Test func openLooksOnlyInListedCoursesAndNeverWaitsOnAFIFO() throws {
        let (root, manifest) = try BlockLocationsTests.syncedDemo()
        let target = ClientTarget(root: DurableFile.folder(of: root))
        let copy = target.root + "/0stray"
        #expect(try TestSupport.run("/bin/cp", ["-a", root, copy]).status == 0)
        let id = try #require(manifest.blocks.first { $0.isOffline }).usageID
        let path = try target.markOpened(id)
        #expect(path.hasPrefix(root + "/"), "\(path)")
        let journal = target.root + "/.coursepack-sync/opened.tsv"
        unlink(journal)
        #expect(mkfifo(journal, 0o644) == 0)
        #expect(throws: ClientError.self) { try target.markOpened(id) }
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
