import Crypto
import FileSystem
import Foundation
import Manifest
import Synchronization
import ZipArchive
import ZlibStream

/// Every content the build's archives hold (pages, style sheets, statics, runtime files, the
/// search index), published once under `files/` by its SHA-256 (`CourseFile.path`), and the
/// place every archive copies it from: each content is deflated once per build at most, and
/// not at all when the previous publish holds it unchanged, and an archive entry is the
/// published file's deflate stream and CRC-32 (or its stored bytes) as they are.
///
/// Whether a content is deflated depends on its bytes alone (`CompressionPolicy.looksCompressed`,
/// then whether deflate makes it smaller), never on a name, so parallel workers agree.
final class CourseFileStore: Sendable {
    /// Where a content's bytes come from.
    enum Content: Sendable {
        case bytes([UInt8])
        /// A course file, streamed (whatever its size); its SHA-256 is checked on the way.
        case file(path: String)
        /// Deflated already (the search index, in pieces a rebuild reuses).
        case prepared(PreparedEntry)
    }

    /// One content in its published form; `entry` is how an archive copies it, nil until it is
    /// first needed for a content kept from the previous publish (a stored one's CRC-32, a gzip
    /// member's framing).
    struct Published: Sendable {
        let file: CourseFile
        let path: String
        var entry: CopiedEntry?
    }

    let outputFolder: String
    let level: Int32
    let pendingSyncs: PendingSyncs?
    /// The previous manifest's contents, and when it was written: a published file not
    /// changed since, with the size it gives, is trusted as it is (as archives are).
    let previous: [String: CourseFile]
    let previousWritten: Int64?
    private let published = Mutex<[String: Published]>([:])
    private let folders = Mutex<Set<String>>([])

    init(outputFolder: String, level: Int32, pendingSyncs: PendingSyncs?, previous: [String: CourseFile], previousWritten: Int64?) {
        self.outputFolder = outputFolder
        self.level = level
        self.pendingSyncs = pendingSyncs
        self.previous = previous
        self.previousWritten = previousWritten
    }

    /// Every content published or found intact so far, by SHA-256.
    var contents: [String: CourseFile] { published.withLock { $0.mapValues(\.file) } }

    /// Folders that received a new name: synced before a manifest names what is in them.
    var writtenFolders: Set<String> { folders.withLock { $0 } }

    /// The content, published unless the previous publish holds it intact.
    @discardableResult
    func publish(_ content: Content, sha256: String) throws -> CourseFile {
        let made: Published
        if let known = published.withLock({ $0[sha256] }) {
            if (try? copiedEntry(of: known, sha256: sha256)) != nil { return known.file }
            // Kept from the previous publish, and its framing is damaged: written again.
            made = try write(content, sha256: sha256)
        } else if var kept = adopted(sha256), let entry = try? Self.readEntry(of: kept) {
            kept.entry = entry
            made = kept
        } else {
            made = try write(content, sha256: sha256)
        }
        return published.withLock { known in
            // Another worker's copy, unless it is the one found damaged above (now replaced).
            if let first = known[sha256], first.entry != nil { return first.file }
            known[sha256] = made
            return made.file
        }
    }

    /// The name this store keeps for a published content, the one `String` every listing that
    /// names it shares: at 100,000 blocks, most of which list the same few contents, a copy of
    /// the hex name in each listing was tens of megabytes.
    func sharedName(_ sha256: String) -> String {
        published.withLock { known in known.index(forKey: sha256).map { known[$0].key } } ?? sha256
    }

    /// Whether every content `listing` names is published, or intact from the previous publish
    /// (then it counts as published): what lets a block keep its previous entry. Intact as an
    /// archive is: of the size the manifest gives and not changed since it was written. At
    /// 100,000 reused blocks, reading each gzip member's framing here too was an open and two
    /// reads per content; it is read when an archive first copies the content, and a block
    /// built with a content whose framing is damaged publishes it again (`publish`).
    func holds(_ listing: FileListing) -> Bool {
        // One lock per block, not one per content: the workers take it for every reused block.
        let unknown = published.withLock { table in Set(listing.values).filter { table[$0] == nil } }
        for sha256 in unknown {
            guard let found = adopted(sha256) else { return false }
            published.withLock { if $0[sha256] == nil { $0[sha256] = found } }
        }
        return true
    }

    /// How an archive holds a published content: its bytes copied from `files/`.
    func source(of sha256: String) throws -> ZipEntry.Source {
        guard let known = published.withLock({ $0[sha256] }) else {
            throw BuildError.output(path: outputFolder + "/" + CourseFile.path(sha256: sha256, encoding: nil), reason: "content was never published")
        }
        return .copied(try copiedEntry(of: known, sha256: sha256))
    }

    /// How an archive copies a content: known once it is written; for one kept from the
    /// previous publish, read once per build (a stored file's CRC-32, a gzip member's header and
    /// trailer) and remembered.
    private func copiedEntry(of known: Published, sha256: String) throws -> CopiedEntry {
        if let entry = known.entry { return entry }
        let entry = try Self.readEntry(of: known)
        published.withLock { table in
            if table[sha256]?.path == known.path { table[sha256]?.entry = entry }
        }
        return entry
    }

    /// The entry of a content kept from the previous publish, read from its file.
    private static func readEntry(of known: Published) throws -> CopiedEntry {
        if known.file.encoding == .gzip { return try gzipEntry(at: known.path, of: known.file) }
        let checksum = try FileSweep.sweep(known.path) { _ in }
        guard checksum.size == known.file.size else {
            throw BuildError.output(path: known.path, reason: "is \(checksum.size) bytes, the manifest says \(known.file.size)")
        }
        return CopiedEntry(
            path: known.path, offset: 0, method: .stored, crc32: checksum.crc32, compressedSize: checksum.size, uncompressedSize: checksum.size)
    }

    /// A published gzip member's deflate stream, as its header and trailer frame it: the fixed
    /// header this store writes, and a trailer giving the size the manifest lists.
    private static func gzipEntry(at path: String, of file: CourseFile) throws -> CopiedEntry {
        let damaged = BuildError.output(path: path, reason: "is not the gzip member of \(file.size) bytes the manifest lists")
        guard file.compressedSize >= GzipMember.size(deflated: 0), let input = try? InputFile(path: path),
            (try? input.read(at: 0, count: GzipMember.header.count)) == GzipMember.header,
            let tail = try? input.read(at: file.compressedSize - UInt64(GzipMember.trailerSize), count: GzipMember.trailerSize),
            let trailer = GzipMember.readTrailer(tail), trailer.sizeModulo == UInt32(truncatingIfNeeded: file.size)
        else { throw damaged }
        return CopiedEntry(
            path: path, offset: UInt64(GzipMember.header.count), method: .deflated, crc32: trailer.crc32,
            compressedSize: file.compressedSize - GzipMember.size(deflated: 0), uncompressedSize: file.size)
    }

    /// The previous publish's file of this content, when its size is the manifest's and it was
    /// not changed after that manifest was written.
    private func adopted(_ sha256: String) -> Published? {
        guard let before = previous[sha256], let written = previousWritten else { return nil }
        let path = outputFolder + "/" + before.path(sha256: sha256)
        guard let stamp = FileStamp.of(path), stamp.size == before.compressedSize, stamp.changed < written else { return nil }
        return Published(file: before, path: path, entry: nil)
    }

    private func write(_ content: Content, sha256: String) throws -> Published {
        switch content {
        case .bytes(let bytes):
            guard !bytes.isEmpty, !CompressionPolicy.looksCompressed(bytes.prefix(12)) else {
                return try writeStored(bytes, sha256: sha256)
            }
            let deflated = try Self.deflate(bytes, level: level)
            guard deflated.count < bytes.count else { return try writeStored(bytes, sha256: sha256) }
            return try writeGzip(deflated, crc32: CRC32.checksum(bytes), size: UInt64(bytes.count), sha256: sha256)
        case .prepared(let prepared):
            guard prepared.method == .deflated else { return try writeStored(prepared.payload, sha256: sha256) }
            return try writeGzip(prepared.payload, crc32: prepared.crc32, size: prepared.uncompressedSize, sha256: sha256)
        case .file(let path):
            return try writeFile(path, sha256: sha256)
        }
    }

    static func deflate(_ bytes: [UInt8], level: Int32) throws -> [UInt8] {
        var compressed: [UInt8] = []
        compressed.reserveCapacity(bytes.count / 2)
        let stream = try ZStream(.deflate(level: level))
        try bytes.withUnsafeBytes { raw in
            try stream.deflate(raw, finish: true) { compressed.append(contentsOf: $0) }
        }
        return compressed
    }

    private func writeStored(_ bytes: [UInt8], sha256: String) throws -> Published {
        let file = CourseFile(size: UInt64(bytes.count), compressedSize: UInt64(bytes.count), encoding: nil)
        let path = try place(file, sha256: sha256) { out in try out.write(bytes) }
        let size = UInt64(bytes.count)
        return Published(
            file: file, path: path,
            entry: CopiedEntry(path: path, offset: 0, method: .stored, crc32: CRC32.checksum(bytes), compressedSize: size, uncompressedSize: size))
    }

    private func writeGzip(_ deflated: [UInt8], crc32: UInt32, size: UInt64, sha256: String) throws -> Published {
        let file = CourseFile(size: size, compressedSize: GzipMember.size(deflated: UInt64(deflated.count)), encoding: .gzip)
        let path = try place(file, sha256: sha256) { out in
            try out.write(GzipMember.header)
            try out.write(deflated)
            try out.write(GzipMember.trailer(crc32: crc32, size: size))
        }
        let entry = CopiedEntry(
            path: path, offset: UInt64(GzipMember.header.count), method: .deflated, crc32: crc32,
            compressedSize: UInt64(deflated.count), uncompressedSize: size)
        return Published(file: file, path: path, entry: entry)
    }

    /// A course file, streamed: deflated into a gzip member unless its first bytes say it is
    /// compressed or deflate does not make it smaller, then stored as it is. Its SHA-256 is
    /// checked against the name, so a file changed during the build is an error, not a lie.
    private func writeFile(_ source: String, sha256: String) throws -> Published {
        let head = try InputFile(path: source).read(at: 0, count: 12)
        if !head.isEmpty, !CompressionPolicy.looksCompressed(head) {
            var crc = CRC32()
            var hasher = SHA256()
            var size: UInt64 = 0
            var deflatedSize: UInt64 = 0
            let stream = try ZStream(.deflate(level: level))
            var file = CourseFile(size: 0, compressedSize: 0, encoding: .gzip)
            let path = try place(file, sha256: sha256, keepingIf: { deflatedSize < size }) { out in
                try out.write(GzipMember.header)
                try Self.stream(source) { piece, last in
                    crc.update(piece)
                    hasher.update(bufferPointer: piece)
                    size += UInt64(piece.count)
                    try stream.deflate(piece, finish: last) { try out.write($0); deflatedSize += UInt64($0.count) }
                }
                try Self.check(SHA256Hex.hex(hasher.finalize()), is: sha256, source: source)
                try out.write(GzipMember.trailer(crc32: crc.value, size: size))
            }
            if let path {
                file = CourseFile(size: size, compressedSize: GzipMember.size(deflated: deflatedSize), encoding: .gzip)
                let entry = CopiedEntry(
                    path: path, offset: UInt64(GzipMember.header.count), method: .deflated, crc32: crc.value,
                    compressedSize: deflatedSize, uncompressedSize: size)
                return Published(file: file, path: path, entry: entry)
            }
        }
        return try copyStored(source, sha256: sha256)
    }

    /// Copied by the kernel where it can (copy_file_range: shared blocks or a copy between
    /// cached pages), then hashed as the copy holds it, so the published bytes are what the
    /// name promises even if the source changes meanwhile.
    private func copyStored(_ source: String, sha256: String) throws -> Published {
        var crc = CRC32()
        var hasher = SHA256()
        var size: UInt64 = 0
        let observer: (UnsafeRawBufferPointer) -> Void = { piece in
            crc.update(piece)
            hasher.update(bufferPointer: piece)
            size += UInt64(piece.count)
        }
        let path = try place(CourseFile(size: 0, compressedSize: 0, encoding: nil), sha256: sha256, observer: observer) { out in
            let input = try InputFile(path: source)
            try out.append(from: input, at: 0, count: try input.size)
            try out.flush()
            guard out.observedFinalBytes else { throw BuildError.output(path: out.path, reason: "could not read back what was copied") }
            try Self.check(SHA256Hex.hex(hasher.finalize()), is: sha256, source: source)
        }
        let file = CourseFile(size: size, compressedSize: size, encoding: nil)
        return Published(
            file: file, path: path,
            entry: CopiedEntry(path: path, offset: 0, method: .stored, crc32: crc.value, compressedSize: size, uncompressedSize: size))
    }

    private static func check(_ digest: String, is expected: String, source: String) throws {
        guard digest == expected else {
            throw BuildError.output(path: source, reason: "changed while the build read it (its SHA-256 is no longer the one it was bundled under); build again")
        }
    }

    /// Passes the file in chunks, the last one (empty at the end) marked.
    private static func stream(_ path: String, _ body: (UnsafeRawBufferPointer, Bool) throws -> Void) throws {
        let input = try InputFile(path: path)
        var buffer = [UInt8](repeating: 0, count: fileChunkSize)
        try buffer.withUnsafeMutableBytes { chunk in
            while true {
                let n = try input.read(into: chunk)
                try body(UnsafeRawBufferPointer(rebasing: chunk[0..<n]), n == 0)
                if n == 0 { break }
            }
        }
    }

    /// Writes the published file through a temporary name and renames it into place (synced
    /// first unless the build syncs everything together); returns its path.
    private func place(
        _ file: CourseFile, sha256: String, observer: ((UnsafeRawBufferPointer) -> Void)? = nil, _ body: (OutputFile) throws -> Void
    ) throws -> String {
        guard let path = try place(file, sha256: sha256, keepingIf: { true }, observer: observer, body) else {
            throw BuildError.output(path: outputFolder, reason: "content \(sha256) was not written")
        }
        return path
    }

    /// As `place`, but the written file is thrown away (nil) unless `keep` says otherwise.
    private func place(
        _ file: CourseFile, sha256: String, keepingIf keep: () -> Bool, observer: ((UnsafeRawBufferPointer) -> Void)? = nil,
        _ body: (OutputFile) throws -> Void
    ) throws -> String? {
        guard CourseFile.isContentKey(sha256) else {
            throw BuildError.output(path: outputFolder + "/" + CourseFile.folder, reason: "\"\(sha256)\" is not a SHA-256 content key")
        }
        let path = outputFolder + "/" + file.path(sha256: sha256)
        let folder = DurableFile.folder(of: path)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = DurableFile.temporaryPath(beside: path)
        let out = try OutputFile(creating: temporary, observer: observer)
        do {
            try body(out)
            guard keep() else {
                try? out.close()
                unlink(temporary)
                return nil
            }
            if pendingSyncs == nil { try out.sync() } else { try out.startWriteback() }
            try out.close()
            guard rename(temporary, path) == 0 else { throw BuildError.output(path: path, reason: String(cString: strerror(errno))) }
        } catch {
            try? out.close()
            unlink(temporary)
            throw error
        }
        pendingSyncs?.add(path)
        folders.withLock { $0.formUnion([folder, DurableFile.folder(of: folder)]) }
        return path
    }
}
