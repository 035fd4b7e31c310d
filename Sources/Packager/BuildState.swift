import Crypto
import Foundation
import Manifest

/// What the last build of an output folder started from and left behind, so that a
/// rebuild whose inputs and outputs are exactly as they were can stop before loading the
/// course: the result would be the same bytes, so there is nothing to do. Anything in doubt
/// (a changed stamp, a file changed just before the build, an archive that could not be
/// written) means a full build. A block whose content is broken fails the same way from the
/// same inputs, so its error is recorded and reported again, like the warnings.
struct BuildState: Codable, Sendable, Equatable {
    static let fileName = "state.json"
    /// The name a previous coursepack used, inside the output folder itself.
    static let legacyFileName = ".coursepack-state.json"
    static let format = 2

    var format = Self.format
    /// Digest of the course tree's stamps and of everything else the output depends on.
    var inputs: String
    /// Digest of the stamps of the manifest and every archive, taken after the build.
    var outputs: String
    var courseID: String
    var blocks: Int
    var offlineFalse: Int
    /// Warnings are part of the result: an unchanged rebuild reports them again.
    var warnings: [Diagnostic]
    /// So are failures: the same blocks fail again, with the same errors, and the exit status says so.
    var failed: Int
    var errors: [Diagnostic]

    enum CodingKeys: String, CodingKey {
        case format, inputs, outputs, blocks, warnings, failed, errors
        case courseID = "course_id"
        case offlineFalse = "offline_false"
    }

    /// Stamp of the course at `coursePath` combined with every option and the program itself.
    /// Nil when the course cannot be walked; the build then reports why.
    static func inputs(
        coursePath: String, options: BuildOptions, rendererFingerprint: String, since: Int64 = TreeStamp.now()
    ) -> (key: String, settled: Bool)? {
        let skipped = [options.outputFolder, options.stateFolder].compactMap(TreeStamp.identity(of:))
        guard let course = TreeStamp.of(coursePath, skipping: skipped, since: since) else {
            return nil
        }
        var hasher = SHA256()
        let program = FileStamp.of("/proc/self/exe").map { "\($0.size)/\($0.modified)" } ?? "unknown"
        let canonicalCourse = realpath(coursePath, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? coursePath
        let parts = [
            "coursepack-state-v\(format)", Version.current, program, rendererFingerprint,
            options.lmsURL ?? "-", "\(options.compressionLevel)", options.generator, canonicalCourse, course.digest,
        ]
        for part in parts { hasher.update(data: Array((part + "\n").utf8)) }
        return (Digest.hex(hasher.finalize()), course.settled)
    }

    /// The manifest and everything in the archive folders; a report written beside the
    /// manifest is not the publish. Files an older coursepack left at the top (`.coursepack…`)
    /// count, so a build that would find them does not stop before removing them.
    static func outputs(in folder: String, workers: Int = 1) -> String? {
        TreeStamp.of(folder, workers: workers) { name, depth, isFolder in
            depth > 1 || isFolder || name == Array("manifest.json".utf8) || name.starts(with: Array(".coursepack".utf8))
        }?.digest
    }

    static func exists(in folder: String) -> Bool {
        access(folder + "/" + fileName, F_OK) == 0
    }

    static func load(from folder: String) -> BuildState? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + fileName),
            let state = try? JSONDecoder().decode(BuildState.self, from: data), state.format == format
        else { return nil }
        return state
    }

    static func remove(from folder: String) {
        unlink(folder + "/" + fileName)
    }

    /// Written like the manifest: synced, renamed into place, folder synced.
    func save(to folder: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return }
        try? DurableFile.replace(folder + "/" + Self.fileName, with: Array(data), temporary: folder + "/" + Self.fileName + ".tmp-\(getpid())")
    }
}
