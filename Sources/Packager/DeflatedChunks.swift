import CZlib
import Crypto
import IncrementalBuild
import ZlibStream

/// The search index's part files deflated, each ended with a sync flush (byte-aligned, no final
/// block; an empty final block after it makes the whole stream), kept in the state folder so
/// that a rebuild deflates again only the parts whose bytes changed: an edit to one page costs
/// one part, not the whole index. Parts are found by the SHA-256 of their bytes, and the
/// compression level: equal keys are equal output.
struct DeflatedChunks: Sendable {
    struct Chunk: Sendable {
        var crc32: UInt32
        var length: Int
        /// A slice: of the archive entry that holds it (ended by `finalBlock`), of the cache
        /// file read, or of its own buffer, so the deflated index is held once.
        var deflated: ArraySlice<UInt8>
    }

    static let fileName = "search-chunks.bin"
    static let format = "coursepack-search-chunks-v3"
    /// An empty final block of fixed codes: what ends the joined stream.
    static let finalBlock: [UInt8] = [0x03, 0x00]

    let level: Int32
    /// By SHA-256 of the piece's bytes.
    var chunks: [[UInt8]: Chunk] = [:]

    init(level: Int32, chunks: [[UInt8]: Chunk] = [:]) {
        self.level = level
        self.chunks = chunks
    }

    /// Empty when there is no file, or one written at another level.
    static func load(from stateFolder: String, level: Int32) -> DeflatedChunks {
        var cache = DeflatedChunks(level: level)
        guard let records = RecordFile.load(stateFolder + "/" + fileName, format: format),
            let head = records.first, head.count == 1, String(decoding: head[0], as: UTF8.self) == String(level)
        else { return cache }
        for fields in records.dropFirst() where fields.count == 4 && fields[0].count == 32 && fields[1].count == 4 {
            guard let length = Int(String(decoding: fields[2], as: UTF8.self)) else { continue }
            let crc = fields[1].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            cache.chunks[Array(fields[0])] = Chunk(crc32: crc, length: length, deflated: fields[3])
        }
        return cache
    }

    func save(to stateFolder: String) {
        let levelField = ArraySlice(String(level).utf8)
        let size = chunks.reduce(RecordFile.recordSize(fieldLengths: [levelField.count])) { total, piece in
            total + RecordFile.recordSize(fieldLengths: [piece.key.count, 4, String(piece.value.length).utf8.count, piece.value.deflated.count])
        }
        var file = RecordFile(format: Self.format, capacity: size)
        file.add([levelField])
        for key in chunks.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            guard let chunk = chunks[key] else { continue }
            let crc = withUnsafeBytes(of: chunk.crc32.littleEndian) { Array($0) }
            file.add([key[...], crc[...], ArraySlice(String(chunk.length).utf8), chunk.deflated[...]])
        }
        file.save(to: stateFolder + "/" + Self.fileName, synced: false)
    }

    /// The SHA-256 of `bytes` after eight zero bytes: where pieces of one stream once hashed the
    /// length of the bytes before them (none now: every part is a stream of its own), kept so
    /// that the caches already written stay valid.
    static func key(of bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        withUnsafeBytes(of: UInt64(0).littleEndian) { hasher.update(bufferPointer: $0) }
        hasher.update(data: bytes)
        return Array(hasher.finalize())
    }

    /// The bytes `chunk` was deflated from, when they are the bytes `key` names (their length,
    /// CRC-32 and SHA-256); nil for a damaged cache, whose piece is then made again.
    static func inflate(_ chunk: Chunk, key: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        let input = Array(chunk.deflated) + finalBlock
        // One byte more than the piece should hold: a stream that fills it is too long.
        var output = [UInt8](repeating: 0, count: chunk.length + 1)
        let (code, produced) = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                let code = CZlib.inflate(&stream, Z_FINISH)
                return (code, out.count - Int(stream.avail_out))
            }
        }
        guard code == Z_STREAM_END, produced == chunk.length, stream.avail_in == 0 else { return nil }
        output.removeLast()
        guard CRC32.checksum(output) == chunk.crc32, Self.key(of: output) == key else { return nil }
        return output
    }

    /// `bytes` deflated as raw deflate ended by a sync flush, not final: `finalBlock` after it
    /// makes the whole stream.
    static func deflate(_ bytes: [UInt8], level: Int32) throws(ZlibError) -> Chunk {
        var stream = z_stream()
        var code = deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard code == Z_OK else { throw ZlibError(operation: "init", code: code) }
        defer { deflateEnd(&stream) }
        // A sync flush after all input: deflateBound plus the flush's few bytes always suffices.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 16)
        let produced = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out -> Int in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                code = CZlib.deflate(&stream, Z_SYNC_FLUSH)
                return out.count - Int(stream.avail_out)
            }
        }
        guard code == Z_OK, stream.avail_in == 0 else { throw ZlibError(operation: "deflate", code: code) }
        // A copy of exactly the bytes produced: the buffer was sized for incompressible input,
        // and a search index of 100,000 pages held its slack (about 150 MB) until the build ended.
        return Chunk(crc32: CRC32.checksum(bytes), length: bytes.count, deflated: Array(output[..<produced])[...])
    }
}
