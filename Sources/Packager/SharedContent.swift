import Crypto
import FileSystem
import Foundation
import Manifest
import ZipArchive

/// Content a device keeps once per course rather than once per page (`SharedArchive.Kind`: the
/// page runtime, the search index): the entries of its archive and the hash of what they hold,
/// which names the archive. Each kind prepares its content its own way; publishing it is the
/// same for every kind.
struct SharedContent: Sendable {
    let kind: SharedArchive.Kind
    let contentHash: String
    let entries: [ZipEntry]

    var archivePath: String { kind.archivePath(contentHash: contentHash) }

    /// Writes the archive unless the previous publish already holds it (its name is its content);
    /// `written` says whether its folder got a new name to sync.
    func publish(into folder: String, writer: ZipWriter, previous: SharedArchive?) throws -> (SharedArchive, written: Bool) {
        let path = folder + "/" + archivePath
        if let previous, previous.archive == archivePath, previous.contentHash == contentHash,
            FileStamp.of(path)?.size == previous.size, (try? SHA256Hex.ofFile(path)) == previous.sha256
        {
            return (previous, false)
        }
        try FileManager.default.createDirectory(atPath: folder + "/" + kind.folder, withIntermediateDirectories: true)
        var hasher = SHA256()
        let written = try writer.write(entries, to: path) {
            hasher.update(bufferPointer: $0)
        }
        let sha256 = written.observedAll ? SHA256Hex.hex(hasher.finalize()) : try CourseFileDigest.archive(path)
        return (SharedArchive(archive: archivePath, size: written.size, sha256: sha256, contentHash: contentHash), true)
    }
}

extension SharedArchive.Kind {
    /// How the build's messages name an archive of this kind.
    var title: String {
        switch self {
        case .runtime: "runtime archive"
        case .search: "search index"
        }
    }
}
