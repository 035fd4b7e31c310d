import Foundation
import IncrementalCheck
import Testing

/// A missed dependency would silently serve stale pages, so incremental builds are held to one
/// property (`IncrementalCheck`): after any edit, building over the previous publish gives
/// exactly the bytes a build from scratch gives. Edits are random (html, static files, scripts,
/// stylesheets, policies, course structure, page templates), applied one at a time to a copy of
/// a real course.
///
/// `COURSEPACK_PROPERTY_EDITS` sets how many edits in all; `make bench` runs 300 in the release
/// build (`coursepack-bench property`).
@Suite struct IncrementalPropertyTests {
    static let defaultEdits = 200

    static var runs: [IncrementalCheck.Run] {
        IncrementalCheck.runs(totalEdits: ProcessInfo.processInfo.environment["COURSEPACK_PROPERTY_EDITS"].flatMap { Int($0) } ?? defaultEdits)
    }

    @Test(arguments: IncrementalPropertyTests.runs)
    func anIncrementalBuildEqualsAFreshOneAfterEveryEdit(_ run: IncrementalCheck.Run) throws {
        let outcome = try IncrementalCheck.perform(run)
        #expect(outcome.failure == nil, "\(outcome.failure ?? "")")
        if outcome.failure == nil { #expect(outcome.editsApplied == run.edits) }
        let expectedKinds = min(CourseEditor.allKinds.count, run.edits / 4)
        #expect(outcome.kinds.count >= expectedKinds, "every kind of edit was tried: \(outcome.kinds.sorted())")
    }

    @Test(arguments: IncrementalCheck.SearchRecordFault.allCases)
    func aBuildAfterSearchRecordsGoneWrongEqualsAFreshOne(_ fault: IncrementalCheck.SearchRecordFault) throws {
        let difference = try IncrementalCheck.buildWithSearchRecords(fault)
        #expect(difference == nil, "\(difference ?? "")")
    }

    /// The caches a build saves without waiting for the disk (memos, file hashes, page facts,
    /// the search index's pieces and cuts) may come back older, cut short or not at all after a power cut:
    /// each only costs work, never a byte of the publish, whatever changed since they were saved.
    @Test(arguments: IncrementalCheck.LostCaches.allCases, IncrementalCheck.EditBetweenBuilds.allCases)
    func aBuildAfterCachesLostInAPowerCutEqualsAFreshOne(_ lost: IncrementalCheck.LostCaches, _ edit: IncrementalCheck.EditBetweenBuilds) throws {
        let difference = try IncrementalCheck.buildAfterLosingCaches(lost, edit: edit)
        #expect(difference == nil, "\(difference ?? "")")
    }
}
