import Crypto
import FileSystem
import Foundation

/// What the last build of an output folder started from and left behind, so that a rebuild
/// whose inputs and outputs are exactly as they were can stop before loading the course: the
/// result would be the same bytes. Anything in doubt (a changed stamp, a file changed just
/// before the build, an archive that could not be written) means a full build. `Summary` is
/// whatever the builder reports again when it stops early (counts, warnings, the errors of
/// blocks that fail the same way from the same inputs); this module does not look into it.
public struct BuildRecord<Summary: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    static var fileName: String { "state.json" }
    /// The name a previous coursepack used, inside the output folder itself.
    public static var legacyFileName: String { ".coursepack-state.json" }
    static var format: Int { 3 }

    var format: Int
    /// Digest of the course tree's stamps and of everything else the output depends on.
    public var inputs: String
    /// Digest of the stamps of the manifest and every archive, taken after the build.
    public var outputs: String
    public var summary: Summary

    init(inputs: String, outputs: String, summary: Summary) {
        self.format = Self.format
        self.inputs = inputs
        self.outputs = outputs
        self.summary = summary
    }

    static func load(from folder: String) -> BuildRecord? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + fileName),
            let record = try? JSONDecoder().decode(BuildRecord.self, from: data), record.format == format
        else { return nil }
        return record
    }

    /// Written like the manifest: synced, renamed into place, folder synced.
    func save(to folder: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return }
        try? DurableFile.replace(folder + "/" + Self.fileName, with: Array(data))
    }
}
