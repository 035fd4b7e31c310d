import Crypto
import FileSystem
import Foundation
import Manifest
import ZipArchive

/// Content a device keeps once per course rather than once per page (`SharedArchive.Kind`: the
/// page runtime, the search index): the files of its folder and the hash of what they hold,
/// which names the archive. Each kind prepares its content its own way; publishing it is the
/// same for every kind, and the same as a block's: each file goes to `files/` once
/// (`CourseFileStore`), the folder is listed, and the archive copies the published bytes.
struct SharedContent: Sendable {
    /// One file of the folder: its path there, the SHA-256 of its bytes, and the bytes.
    struct File: Sendable {
        let name: String
        let sha256: String
        let content: CourseFileStore.Content
    }

    let kind: SharedArchive.Kind
    let contentHash: String
    let files: [File]

    var archivePath: String { kind.archivePath(contentHash: contentHash) }

    /// Publishes the files, and writes the archive unless the previous publish already holds it
    /// (its name is its content); `written` says whether its folder got a new name to sync.
    func publish(into folder: String, writer: ZipWriter, store: CourseFileStore, previous: SharedArchive?) throws -> (SharedArchive, written: Bool) {
        var listing = FileListing()
        var unpackedSize: UInt64 = 0
        for file in files {
            unpackedSize += try store.publish(file.content, sha256: file.sha256).size
            listing[file.name] = file.sha256
        }
        let path = folder + "/" + archivePath
        if var kept = previous, kept.archive == archivePath, kept.contentHash == contentHash,
            FileStamp.of(path)?.size == kept.size, (try? SHA256Hex.ofFile(path)) == kept.sha256
        {
            kept.files = listing
            kept.unpackedSize = unpackedSize
            return (kept, false)
        }
        try FileManager.default.createDirectory(atPath: folder + "/" + kind.folder, withIntermediateDirectories: true)
        var hasher = SHA256()
        let entries = try files.map { ZipEntry(name: $0.name, source: try store.source(of: $0.sha256)) }
        let written = try writer.write(entries, to: path) {
            hasher.update(bufferPointer: $0)
        }
        let sha256 = written.observedAll ? SHA256Hex.hex(hasher.finalize()) : try CourseFileDigest.archive(path)
        var archive = SharedArchive(archive: archivePath, size: written.size, sha256: sha256, contentHash: contentHash)
        archive.files = listing
        archive.unpackedSize = unpackedSize
        return (archive, true)
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
