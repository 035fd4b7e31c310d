import Foundation
import Manifest
import Packager
import Testing
import TestSupport
import ZipArchive

/// Rendered pages, built through the whole pipeline (render, rewrite, archive), compared byte
/// for byte with `Snapshots/<case>.txt`: duplicated or stray markup fails here where a
/// `contains` would pass. Cases are declared in `PageSnapshotCase.all`.
@Suite struct PageSnapshotTests {
    /// The demo course is built once for all its cases.
    static let demoBuild = Result { try build(TestSupport.demoCourse).0 }

    /// The published folder holding the case's archives.
    func publish(_ source: PageSnapshotCase.Source) throws -> String {
        switch source {
        case .demoCourse:
            return try Self.demoBuild.get()
        case .snippet(let leaves, let files, nil):
            return try build(try courseWith(leaves.map { ($0.type, $0.name, $0.xml) }, extra: files)).0
        case .snippet(let leaves, let files, let lmsURL?):
            let course = try courseWith(leaves.map { ($0.type, $0.name, $0.xml) }, extra: files)
            let out = TestSupport.temporaryFolder("snapshot") + "/out"
            let options = try BuildOptions(outputFolder: out, publishedAt: "2026-11-22T10:00:00Z", jobs: 2, lmsURL: lmsURL)
            _ = try CoursePackager(options: options).build(coursePath: course)
            return out
        }
    }

    /// The shown entries as one text, each under a `---------- archive[: entry] ----------`
    /// line and followed by a newline of its own, as esbuild's snapshots join output files.
    func snapshotText(_ shown: [PageSnapshotCase.Shown], in out: String) throws -> [UInt8] {
        var text: [UInt8] = []
        for item in shown {
            let reader = try ZipReader(path: out + "/" + item.archive)
            if let entry = item.entry {
                text += Array("---------- \(item.archive): \(entry) ----------\n".utf8)
                text += try reader.contents(of: entry)
            } else {
                text += Array("---------- \(item.archive) ----------\n".utf8)
                text += Array(reader.entries.map(\.name).joined(separator: "\n").utf8)
            }
            text += Array("\n".utf8)
        }
        // The runtime archive's name is the hash of the jQuery and KaTeX files Debian installed,
        // not something a page renders: it is pinned where it is made (LearnerViewTests).
        if let runtime = try ManifestFile.read(out + "/manifest.json")?.runtime {
            text = text.replacing(Array((String(runtime.archive.dropLast(4)) + "/").utf8), with: Array("runtime/RUNTIME/".utf8))
        }
        return text
    }

    @Test(arguments: PageSnapshotCase.all)
    func aRenderedPageMatchesItsSnapshot(_ snapshot: PageSnapshotCase) throws {
        let out = try publish(snapshot.source)
        let text = try snapshotText(snapshot.shown, in: out)
        let shown = String(decoding: text, as: UTF8.self)
        for marker in snapshot.absent {
            #expect(!shown.contains(marker), "\(marker) reached the page")
        }
        SnapshotFolder.pages.check(text, against: snapshot.fileName)
    }

    /// A snapshot no case declares is a test that silently stopped running.
    @Test func everySnapshotFileBelongsToADeclaredCase() throws {
        let declared = PageSnapshotCase.all.map(\.fileName)
        #expect(Set(declared).count == declared.count, "two cases share a snapshot file")
        let unused = SnapshotFolder.pages.stored().subtracting(declared).sorted()
        if SnapshotFolder.updating {
            for name in unused { try FileManager.default.removeItem(atPath: SnapshotFolder.pages.path + "/" + name) }
            return
        }
        #expect(unused.isEmpty, """
            \(SnapshotFolder.pages.shownPath) holds snapshots no case in PageSnapshotCase.all declares: \(unused.joined(separator: ", ")). \
            Declare the case again, or delete them with \(SnapshotFolder.updateCommand)
            """)
    }

    /// The failure message a changed page gives: where, and how to accept the change.
    @Test func aMismatchNamesTheFirstDifferingLineAndHowToUpdate() {
        let message = SnapshotFolder.difference(
            expected: Array("<p>\n<b>same</b>\n<i>old</i>\n".utf8), actual: Array("<p>\n<b>same</b>\n<i>new</i>\n<hr>\n".utf8), in: "Snapshots/x.txt")
        #expect(message == """
            Snapshots/x.txt differs from the output, first at line 3, byte 4 of the line:
              expected: "<i>old</i>"
              actual:   "<i>new</i>"
            If the new output is right: UPDATE_SNAPSHOTS=1 swift test --filter Snapshot, then review `git diff Snapshots/x.txt`.
            """)
        let shorter = SnapshotFolder.difference(expected: Array("a\nb\n".utf8), actual: Array("a\nb\nc".utf8), in: "s")
        #expect(shorter.contains("line 3, byte 1") && shorter.contains("expected: \"\"") && shorter.contains("actual:   \"c\""))
        let endOfFile = SnapshotFolder.difference(expected: Array("a".utf8), actual: Array("a\nb".utf8), in: "s")
        #expect(endOfFile.contains("expected: (end of file)"))
    }
}
