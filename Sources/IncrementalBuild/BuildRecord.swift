import Crypto
import FileSystem
import Foundation

/// What the last build of an output folder started from and left behind, so that a rebuild
/// whose inputs and outputs are exactly as they were can stop before loading the course: the
/// result would be the same bytes. Anything in doubt (a changed stamp, a file whose content no
/// longer has its recorded hash, an archive that could not be written) means a full build.
/// `Summary` is whatever the builder reports again when it stops early (counts, warnings, the
/// errors of blocks that fail the same way from the same inputs); this module does not look
/// into it.
public struct BuildRecord<Summary: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// A course file whose stamp was too fresh to trust when the build was recorded
    /// (`TreeStamp.fresh`), with the SHA-256 of its content then.
    public struct HashedFile: Sendable, Equatable {
        public let path: String
        public let sha256: String
    }

    static var fileName: String { "record.bin" }
    /// Names earlier coursepacks used: in the state folder, and inside the output folder itself.
    static var previousFileName: String { "state.json" }
    public static var legacyFileName: String { ".coursepack-state.json" }
    static var format: Int { 4 }
    static var fileFormat: String { "coursepack-build-record-v\(format)" }

    var format: Int
    /// Digest of the course tree's stamps and of everything else the output depends on.
    public var inputs: String
    /// Digest of the stamps of the manifest and every archive, taken after the build.
    public var outputs: String
    public var summary: Summary
    /// Checked by content before the record answers; not part of the JSON header.
    public var hashedFiles: [HashedFile] = []

    enum CodingKeys: String, CodingKey {
        case format, inputs, outputs, summary
    }

    init(inputs: String, outputs: String, summary: Summary, hashedFiles: [HashedFile] = []) {
        self.format = Self.format
        self.inputs = inputs
        self.outputs = outputs
        self.summary = summary
        self.hashedFiles = hashedFiles
    }

    /// A `RecordFile`: the record as JSON, then one record a hashed file (path, SHA-256). A
    /// course exported just before its build has every file fresh: JSON for 100,000 of them
    /// would cost more to read than the no-op it allows.
    static func load(from folder: String) -> BuildRecord? {
        guard let records = RecordFile.load(folder + "/" + fileName, format: fileFormat), let header = records.first,
            header.count == 1, var record = try? JSONDecoder().decode(BuildRecord.self, from: Data(header[0])),
            record.format == format
        else { return nil }
        record.hashedFiles.reserveCapacity(records.count - 1)
        for fields in records.dropFirst() {
            guard fields.count == 2 else { return nil }
            record.hashedFiles.append(
                HashedFile(path: String(decoding: fields[0], as: UTF8.self), sha256: String(decoding: fields[1], as: UTF8.self)))
        }
        return record
    }

    /// Written like the manifest: synced, renamed into place, folder synced.
    func save(to folder: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let header = try? encoder.encode(self) else { return }
        var file = RecordFile(format: Self.fileFormat, capacity: header.count + hashedFiles.count * 120)
        file.add([ArraySlice(header)])
        for hashed in hashedFiles {
            file.add([ArraySlice(hashed.path.utf8), ArraySlice(hashed.sha256.utf8)])
        }
        file.save(to: folder + "/" + Self.fileName, synced: true)
    }
}
