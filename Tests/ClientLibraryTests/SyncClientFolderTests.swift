import Foundation
import Manifest
import SyncClient
import Testing
import TestSupport

/// `SyncClient` on a folder of its own (one course, no `ClientTarget` above it), as an app
/// embedding the library uses it.
@Suite(.serialized) struct SyncClientFolderTests {
    static let exampleID = "course-v1:CoursepackX+CP101+2026"

    static func snapshot(_ root: String) -> [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: TestSupport.files(under: root).map { ($0, TestSupport.read(root + "/" + $0)) })
    }

    @Test func anotherCourseIsRefusedUnlessReplacingAndLeftoversOfAKilledSyncAreRemoved() async throws {
        let folder = TestSupport.temporaryFolder("sync-client")
        let published = folder + "/published"
        let built = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"])
        #expect(built.status == 0, "\(built.stderr)")
        let target = folder + "/device"
        let first = try await SyncClient(options: .init(source: .folder(published), target: target)).sync()
        #expect(first.failures.isEmpty && first.downloadedBlocks > 0)

        // The same archives under another course id.
        let other = folder + "/other"
        try TestSupport.copy(published, to: other)
        // The edited manifest.json is the publish (as builders wrote it before the split form).
        try TestSupport.removeSplitManifest(other)
        let text = String(decoding: TestSupport.read(other + "/manifest.json"), as: UTF8.self)
        try TestSupport.write(["manifest.json": text.replacingOccurrences(of: "\"course_id\" : \"\(Self.exampleID)\"", with: "\"course_id\" : \"course-v1:Other+X+1\"")], under: other)
        let before = Self.snapshot(target)
        let refusal = SyncError.otherCourse(target: target, installed: Self.exampleID, offered: "course-v1:Other+X+1")
        await #expect(throws: refusal) { _ = try await SyncClient(options: .init(source: .folder(other), target: target)).sync() }
        await #expect(throws: refusal) { _ = try await SyncClient(options: .init(source: .folder(other), target: target)).plan() }
        #expect(Self.snapshot(target) == before, "a refused sync changes nothing")

        // What a killed sync leaves, whatever became of its pid (1 is alive, and not a sync).
        try TestSupport.write(["html/.welcome_page.new-1-99/index.html": "<p>half", "video/.lecture_video.old-1/index.html": "<p>old",
                               ".manifest.json.tmp-1": "{", ".coursepack-sync/downloads/stuck/x": "x", ".coursepack-sync/files/html_x.tsv.tmp-1": "",
                               ".coursepack-sync/.manifest.json.tmp-1": "{",
                               // A partial download of a block no manifest names any more: kept for a
                               // resume until this sync ends, then removed.
                               ".coursepack-sync/downloads/\(String(repeating: "ab", count: 32))-html_gone.zip": "PK"], under: target)
        var options = SyncClient.Options(source: .folder(other), target: target)
        options.replaceCourse = true
        let replaced = try await SyncClient(options: options).sync()
        #expect(replaced.failures.isEmpty)
        #expect(Set(replaced.leftoversRemoved) == [
            ".manifest.json.tmp-1", "html/.welcome_page.new-1-99", "video/.lecture_video.old-1", ".coursepack-sync/downloads/stuck",
            ".coursepack-sync/.manifest.json.tmp-1",
        ], "\(replaced.leftoversRemoved)")
        #expect(try ManifestFile.read(target + "/manifest.json")?.courseID == "course-v1:Other+X+1")
        #expect(TestSupport.files(under: target).allSatisfy { !$0.contains(".new-") && !$0.contains(".old-") && !$0.contains("stuck") })
        #expect(TestSupport.files(under: target + "/.coursepack-sync/downloads") == [])
        #expect(TestSupport.files(under: target).filter { $0.contains(".tmp-") } == [".coursepack-sync/files/html_x.tsv.tmp-1"], "only the two folders' own temporary files are known")
    }

    @Test func stagingNamesAreRecognisedAndNothingElse() {
        #expect(SyncLeftovers.stagingPID(".welcome_page.new-123-456") == 123)
        #expect(SyncLeftovers.temporaryPID("target.json.tmp-42") == 42)
        #expect(SyncLeftovers.temporaryPID("target.json.tmp-") == nil && SyncLeftovers.temporaryPID("target.json") == nil && SyncLeftovers.temporaryPID("x.tmp-0") == nil)
        #expect(SyncLeftovers.stagingPID(".a.b.old-77") == 77)
        for name in ["welcome_page", ".new-1-2", "x.new-1-2", ".x.new-", ".x.new-a-1", ".x.new-1-b", ".x.old-0", ".x.new--1"] {
            #expect(SyncLeftovers.stagingPID(name) == nil, "\(name)")
        }
    }
}
