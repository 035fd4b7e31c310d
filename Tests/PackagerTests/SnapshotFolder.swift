import Foundation
import Testing
import TestSupport

/// Expected output kept as files beside the tests, one per case, compared byte for byte: the
/// habit of esbuild's bundler tests. `UPDATE_SNAPSHOTS=1 swift test --filter Snapshot` rewrites
/// them (and deletes those no case declares); review the diff like code.
struct SnapshotFolder: Sendable {
    let path: String

    static let pages = SnapshotFolder(path: TestSupport.packageRoot + "/Tests/PackagerTests/Snapshots")
    static let updateCommand = "UPDATE_SNAPSHOTS=1 swift test --filter Snapshot"
    static var updating: Bool { ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] == "1" }

    var shownPath: String { String(path.dropFirst(TestSupport.packageRoot.count + 1)) }

    /// The file names stored, hidden files aside.
    func stored() -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") })
    }

    /// Records an issue unless `actual` is exactly the stored snapshot `name`; when updating,
    /// stores `actual` instead.
    func check(_ actual: [UInt8], against name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let file = path + "/" + name
        let expected = FileManager.default.contents(atPath: file).map { [UInt8]($0) }
        if Self.updating {
            if expected != actual {
                do {
                    try TestSupport.writeBytes(actual, to: file)
                } catch {
                    Issue.record("cannot write \(file): \(error)", sourceLocation: sourceLocation)
                }
            }
            return
        }
        guard let expected else {
            Issue.record("\(shownPath)/\(name) does not exist. To create it: \(Self.updateCommand)", sourceLocation: sourceLocation)
            return
        }
        if expected != actual {
            Issue.record(Comment(rawValue: Self.difference(expected: expected, actual: actual, in: "\(shownPath)/\(name)")), sourceLocation: sourceLocation)
        }
    }

    /// Where two texts first differ, by line and column, with that line of each.
    static func difference(expected: [UInt8], actual: [UInt8], in name: String) -> String {
        let newline = UInt8(ascii: "\n")
        let expectedLines = expected.split(separator: newline, omittingEmptySubsequences: false)
        let actualLines = actual.split(separator: newline, omittingEmptySubsequences: false)
        var line = 0
        while line < min(expectedLines.count, actualLines.count), expectedLines[line].elementsEqual(actualLines[line]) { line += 1 }
        func shown(_ lines: [ArraySlice<UInt8>]) -> (text: String, bytes: [UInt8]) {
            guard line < lines.count else { return ("(end of file)", []) }
            return (String(reflecting: String(decoding: lines[line], as: UTF8.self)), Array(lines[line]))
        }
        let (want, wantBytes) = shown(expectedLines)
        let (got, gotBytes) = shown(actualLines)
        let column = zip(wantBytes, gotBytes).prefix { $0 == $1 }.count
        return """
            \(name) differs from the output, first at line \(line + 1), byte \(column + 1) of the line:
              expected: \(clip(want, around: column))
              actual:   \(clip(got, around: column))
            If the new output is right: \(updateCommand), then review `git diff \(name)`.
            """
    }

    /// Long lines (inline styles, minified scripts) cut to the part around the difference.
    static func clip(_ text: String, around column: Int) -> String {
        guard text.count > 240 else { return text }
        let start = max(0, min(column - 80, text.count - 240))
        let piece = text.dropFirst(start).prefix(240)
        return (start > 0 ? "…" : "") + piece + (start + 240 < text.count ? "…" : "")
    }
}
