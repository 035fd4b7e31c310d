import Diagnostics
import Foundation
import Manifest
import Packager
import Testing
import TestSupport
import ZipArchive

/// What a build reports carries the id that docs/diagnostics.md explains, in the report and in
/// the thrown error alike.
@Suite struct BuildDiagnosticTests {
    @Test func eachBuildErrorNamesWhatWentWrong() {
        #expect(BuildError.busy(path: "/out", waited: 1).diagnosticID == .outputBusy)
        #expect(BuildError.output(path: "/out", reason: "not writable").diagnosticID == .outputUnusable)
        #expect(BuildError.invalidOption("--state-dir inside --out").diagnosticID == .buildOptionInvalid)
        #expect(BuildError.publish(.unwritable(path: "/out/manifest.json", reason: "disk full")).diagnosticID == .manifestUnwritable)
        #expect(BuildError.previousManifest(.newerSchema(path: "/out/manifest.json", version: 9)).diagnosticID == .manifestNewer)
        #expect(ZipError.crcMismatch(path: "html/a.zip", entry: "index.html").diagnosticID == .archiveMalformed)
        #expect(ZipError.unsafeEntry(path: "html/a.zip", entry: "../x", reason: "outside").diagnosticID == .archiveRefused)
    }

    @Test func aStateFolderInsideTheOutputIsRefusedWithItsId() throws {
        let out = TestSupport.temporaryFolder("out")
        let inside = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 1, stateFolder: out + "/state")
        let error = #expect(throws: BuildError.self) { _ = try CoursePackager(options: inside).build(coursePath: TestSupport.exampleCourse) }
        #expect(error?.diagnosticID == .buildOptionInvalid)
    }

    @Test func everyUnresolvedLinkAndEveryVerifyProblemCarriesAnId() throws {
        let out = TestSupport.temporaryFolder("out")
        let options = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 1)
        let report = try CoursePackager(options: options).build(coursePath: TestSupport.exampleCourse)
        #expect(!report.unresolvedLinks.isEmpty)
        #expect(report.unresolvedLinks.allSatisfy { $0.id == DiagnosticID.linkNamesNoFile.code }, "\(report.unresolvedLinks)")
        #expect(report.unresolvedLinks.first?.label("warning") == "warning[CP201]")

        let manifest = try #require(try ManifestFile.read(out + "/manifest.json"))
        let archive = try #require(manifest.blocks.compactMap(\.archive).first)
        try Data("not a zip".utf8).write(to: URL(fileURLWithPath: out + "/" + archive))
        let verified = try PublishVerifier.verify(folder: out)
        #expect(!verified.problems.isEmpty)
        #expect(verified.problems.allSatisfy { $0.id == DiagnosticID.publishMismatch.code }, "\(verified.problems)")
    }
}
