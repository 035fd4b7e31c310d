import Foundation

/// A file under a suite's `Golden/` folder that pins one whole output (a manifest, a report, what a
/// command prints). `check` compares an output with it; with `UPDATE_GOLDEN=1` in the environment
/// it writes the output there instead, so `UPDATE_GOLDEN=1 swift test --filter Golden` (or
/// `UPDATE_GOLDEN=1 make test`) regenerates every golden file, to be reviewed with `git diff`.
public struct GoldenFile: Sendable {
    public static let regenerateCommand = "UPDATE_GOLDEN=1 swift test --filter Golden"

    /// The file's path in the source tree.
    public let path: String

    /// `name` in the `Golden/` folder beside `testFile` (pass `#filePath`).
    public init(_ name: String, beside testFile: String = #filePath) {
        path = URL(fileURLWithPath: testFile).deletingLastPathComponent().appendingPathComponent("Golden/" + name).path
    }

    public static var updating: Bool { ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" }

    /// Nil when `actual` is the golden file's text (or was just written to it under
    /// `UPDATE_GOLDEN=1`); otherwise what differs, for the test to report.
    public func check(_ actual: String) -> String? {
        if Self.updating {
            do {
                try TestSupport.writeBytes(Array(actual.utf8), to: path)
                return nil
            } catch {
                return "could not write the golden file \(path): \(error)"
            }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return "the golden file \(path) is missing; write it with: \(Self.regenerateCommand)"
        }
        return Self.difference(golden: String(decoding: data, as: UTF8.self), actual: actual).map {
            "the output differs from the golden file \(path)\n\($0)\n"
                + "If the change is intended, regenerate with: \(Self.regenerateCommand) (and review git diff)"
        }
    }

    /// The first line where the two texts differ, with both sides; nil when they are equal.
    static func difference(golden: String, actual: String) -> String? {
        guard golden != actual else { return nil }
        let expected = golden.split(separator: "\n", omittingEmptySubsequences: false)
        let got = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let index = (0..<min(expected.count, got.count)).first { expected[$0] != got[$0] } ?? min(expected.count, got.count)
        func line(_ lines: [Substring]) -> String {
            index < lines.count ? "\"\(lines[index])\"" : "(end of file)"
        }
        return """
            first difference at line \(index + 1) (golden has \(expected.count) lines, the output \(got.count)):
              golden: \(line(expected))
              output: \(line(got))
            """
    }

    /// `text` with each absolute path in `paths` replaced by its placeholder (`<out>`), the
    /// longest first, also in the resolved form the programs may print (no `//`, no symlinks):
    /// temporary folders differ on every run.
    public static func replacingPaths(in text: String, _ paths: [(path: String, placeholder: String)]) -> String {
        var forms: [(String, String)] = []
        for (path, placeholder) in paths {
            let standard = URL(fileURLWithPath: path).standardizedFileURL.path
            let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            for form in [path, standard, resolved] where !forms.contains(where: { $0.0 == form }) {
                forms.append((form, placeholder))
            }
        }
        var result = text
        for (form, placeholder) in forms.sorted(by: { $0.0.count > $1.0.count }) {
            result = result.replacingOccurrences(of: form, with: placeholder)
        }
        return result
    }
}
