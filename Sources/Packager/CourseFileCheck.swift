import Crypto
import FileSystem
import Foundation
import Manifest
import ZipArchive
import ZlibStream

/// How a published folder's course files differ from its manifest: each content present at its
/// path, of the listed size, decoding to bytes whose SHA-256 is its name; each listing naming
/// only listed contents, with its exact unpacked size and the same paths and sizes as its
/// archive.
enum CourseFileCheck {
    /// Problems of the top-level `files`, each with the path it concerns.
    static func contentProblems(in folder: String, manifest: CourseManifest) -> [(file: String, message: String)] {
        var problems: [(String, String)] = []
        for (sha256, file) in (manifest.files ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard CourseFile.isContentKey(sha256) else {
                problems.append(("manifest.json", "\"\(sha256)\" is not a SHA-256 content key"))
                continue
            }
            let path = file.path(sha256: sha256)
            if let problem = problem(of: file, sha256: sha256, at: folder + "/" + path) { problems.append((path, problem)) }
        }
        return problems
    }

    private static func problem(of file: CourseFile, sha256: String, at path: String) -> String? {
        guard let stamp = FileStamp.of(path) else { return "content is missing" }
        guard stamp.size == file.compressedSize else { return "content file is \(stamp.size) bytes, the manifest says \(file.compressedSize)" }
        do {
            var hasher = SHA256()
            var size: UInt64 = 0
            try decode(path, gzip: file.encoding == .gzip) { piece in
                hasher.update(bufferPointer: piece)
                size += UInt64(piece.count)
            }
            let digest = SHA256Hex.hex(hasher.finalize())
            if size != file.size { return "content decodes to \(size) bytes, the manifest says \(file.size)" }
            if digest != sha256 { return "content decodes to bytes whose sha256 is \(digest), not its name" }
        } catch {
            return "content does not decode: \(error)"
        }
        return nil
    }

    /// Passes the content's bytes: the file as it is, or its one gzip member decoded (the fixed
    /// header, the deflate stream, then a trailer whose CRC-32 and size match).
    static func decode(_ path: String, gzip: Bool, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard gzip else {
            _ = try FileSweep.sweep(path, body)
            return
        }
        let input = try InputFile(path: path)
        let total = try input.size
        guard total >= GzipMember.size(deflated: 0), try input.read(at: 0, count: GzipMember.header.count) == GzipMember.header else {
            throw ZipError.malformed(path: path, reason: "not a gzip member with coursepack's fixed header")
        }
        let end = total - UInt64(GzipMember.trailerSize)
        let stream = try ZStream(.inflate)
        var crc = CRC32()
        var size: UInt64 = 0
        var offset = UInt64(GzipMember.header.count)
        var ended = false
        while offset < end, !ended {
            let piece = try input.read(at: offset, count: Int(min(UInt64(fileChunkSize), end - offset)))
            let (done, trailing) = try piece.withUnsafeBytes { raw in
                try stream.inflate(raw) { out in
                    crc.update(out)
                    size += UInt64(out.count)
                    try body(out)
                }
            }
            guard !done || trailing == 0 else { throw ZipError.malformed(path: path, reason: "bytes after the deflate stream") }
            ended = done
            offset += UInt64(piece.count)
        }
        guard ended, let trailer = GzipMember.readTrailer(try input.read(at: end, count: GzipMember.trailerSize)),
            trailer.crc32 == crc.value, trailer.sizeModulo == UInt32(truncatingIfNeeded: size)
        else { throw ZipError.malformed(path: path, reason: "deflate stream incomplete, or trailer CRC-32/size wrong") }
    }

    /// How a folder's listing differs from the manifest's contents and from its archive.
    static func listingProblems(_ listing: FileListing?, unpackedSize: UInt64?, archive: String?, folder: String, files: [String: CourseFile]?) -> [String] {
        guard let listing else { return unpackedSize == nil ? [] : ["unpacked_size without a files listing"] }
        var problems: [String] = []
        var sizes: [String: UInt64] = [:]
        for (name, sha256) in listing.sorted(by: { $0.key < $1.key }) {
            guard let file = files?[sha256] else {
                problems.append("files lists \(name) as \(sha256), which the manifest's files does not hold")
                continue
            }
            sizes[name] = file.size
        }
        let total = sizes.values.reduce(0, +)
        if problems.isEmpty, unpackedSize != total {
            problems.append("unpacked_size is \(unpackedSize.map(String.init) ?? "missing"), its files add up to \(total)")
        }
        guard let archive, let reader = try? ZipReader(path: folder + "/" + archive) else { return problems }
        let entries = Dictionary(reader.entries.filter { !$0.isDirectory }.map { ($0.name, $0.uncompressedSize) }, uniquingKeysWith: { a, _ in a })
        if Set(entries.keys) != Set(listing.keys) {
            problems.append("files lists other paths than the archive holds")
        } else if let name = sizes.keys.sorted().first(where: { sizes[$0] != entries[$0] }) {
            problems.append("\(name) is \(entries[name] ?? 0) bytes in the archive, its content \(sizes[name] ?? 0)")
        }
        return problems
    }
}
