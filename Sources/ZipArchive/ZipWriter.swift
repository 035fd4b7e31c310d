#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem
import ZlibStream

/// One file to put in an archive.
public struct ZipEntry: Sendable {
    public enum Source: Sendable {
        case bytes([UInt8])
        /// Streamed from disk in fixed-size chunks, whatever its size; a stored entry's
        /// header goes first, with the CRC-32 of a pass before (`FileSweep`).
        case file(path: String)
        /// A file whose CRC-32 an earlier pass computed (while hashing it, say): stored, it is
        /// written in one pass with its header first, unless the file changed since.
        case checkedFile(path: String, FileChecksum)
        /// Compressed and checksummed once, reused in every archive that holds it.
        case prepared(PreparedEntry)
        /// An entry's data already in its final form inside another file (a published course
        /// file): copied as it is, never compressed again.
        case copied(CopiedEntry)
    }

    public let name: String
    public let source: Source

    public init(name: String, source: Source) {
        self.name = name
        self.source = source
    }
}

/// An entry's bytes as they go into the archive, with its CRC and sizes already known.
public struct PreparedEntry: Sendable {
    public let method: CompressionMethod
    public let crc32: UInt32
    public let uncompressedSize: UInt64
    public let payload: [UInt8]
    public var compressedSize: UInt64 { UInt64(payload.count) }

    /// An entry compressed elsewhere (the search index, deflated in pieces a rebuild reuses).
    public init(method: CompressionMethod, crc32: UInt32, uncompressedSize: UInt64, payload: [UInt8]) {
        self.method = method
        self.crc32 = crc32
        self.uncompressedSize = uncompressedSize
        self.payload = payload
    }
}

/// Where an entry's data lies, ready to copy: `compressedSize` bytes of `path` from `offset`
/// (a gzip member's deflate stream, or a whole stored file), with its CRC-32 and size known.
public struct CopiedEntry: Sendable, Equatable {
    public let path: String
    public let offset: UInt64
    public let method: CompressionMethod
    public let crc32: UInt32
    public let compressedSize: UInt64
    public let uncompressedSize: UInt64

    public init(path: String, offset: UInt64, method: CompressionMethod, crc32: UInt32, compressedSize: UInt64, uncompressedSize: UInt64) {
        self.path = path
        self.offset = offset
        self.method = method
        self.crc32 = crc32
        self.compressedSize = compressedSize
        self.uncompressedSize = uncompressedSize
    }
}

public enum CompressionMethod: UInt16, Sendable {
    case stored = 0
    case deflated = 8
}

/// Writes deterministic ZIP archives: entries sorted by name, a fixed timestamp and fixed
/// attributes, UTF-8 names, no extra fields but ZIP64 where sizes demand it. The same entries
/// always give the same bytes.
public struct ZipWriter: Sendable {
    public let level: Int32
    /// Whether to write unnamed files (O_TMPFILE) where the system can; false always goes
    /// through a temporary name (the path other systems take, which tests exercise with it).
    public let unnamedFiles: Bool
    /// Without it, each archive's data is synced before it gets its name. With it, archives
    /// are named unsynced and listed there, for a caller that makes them durable together
    /// before anything durable names them, as the packager does before its manifest: one disk
    /// flush per build instead of one per archive.
    public let pendingSyncs: PendingSyncs?
    /// What a client unpacks: an archive past them is refused (`ZipError.limitExceeded`, nothing
    /// written at the destination) rather than published for every client to refuse.
    public let limits: ArchiveLimits
    /// Whether copied entries (`ZipEntry.Source.copied`) are copied by the kernel where the
    /// file system can; false always reads and writes them (the path elsewhere, which tests
    /// exercise with it). The archive's bytes are the same either way.
    public let kernelCopies: Bool

    public init(
        level: Int32 = 6, unnamedFiles: Bool = true, pendingSyncs: PendingSyncs? = nil, limits: ArchiveLimits = .current,
        kernelCopies: Bool = true
    ) {
        self.level = level
        self.unnamedFiles = unnamedFiles
        self.pendingSyncs = pendingSyncs
        self.limits = limits
        self.kernelCopies = kernelCopies
    }

    /// Compresses `bytes` now (or stores them when deflate would not make them smaller).
    public func prepare(_ bytes: [UInt8], name: String) throws -> PreparedEntry {
        let crc = CRC32.checksum(bytes)
        if bytes.isEmpty || CompressionPolicy.isPrecompressed(name) {
            return PreparedEntry(method: .stored, crc32: crc, uncompressedSize: UInt64(bytes.count), payload: bytes)
        }
        var compressed: [UInt8] = []
        compressed.reserveCapacity(bytes.count / 2)
        let stream = try ZStream(.deflate(level: level))
        try bytes.withUnsafeBytes { raw in
            try stream.deflate(raw, finish: true) { compressed.append(contentsOf: $0) }
        }
        if compressed.count >= bytes.count {
            return PreparedEntry(method: .stored, crc32: crc, uncompressedSize: UInt64(bytes.count), payload: bytes)
        }
        return PreparedEntry(method: .deflated, crc32: crc, uncompressedSize: UInt64(bytes.count), payload: compressed)
    }

    /// Writes the archive and gives it its name only when it is complete and (without
    /// `pendingSyncs`) synced to disk, so `destination` is never seen half-written, even
    /// after a power cut, and a failed write leaves the previous file. Returns its size. The
    /// caller syncs the folder (once for many archives), or the whole file system, before
    /// anything that names the archive is published.
    @discardableResult
    public func write(_ entries: [ZipEntry], to destination: String) throws -> UInt64 {
        try write(entries, to: destination, observingBytes: nil).size
    }

    /// Like `write(_:to:)`, and passes every byte of the archive, in file order, to `observer`
    /// as it goes to disk, so the caller can hash it without reading it back. That works unless
    /// a streamed entry's header had to be rewritten after it was passed on (files larger than
    /// the write buffer); `observedAll` is then false and the caller reads the file instead.
    ///
    /// On Linux the archive is written as an unnamed file (O_TMPFILE) and named when complete:
    /// a killed build leaves nothing behind, and the folder's lock is taken once per archive
    /// instead of twice, which is what limits parallel builds writing into one folder.
    /// Elsewhere, or where the file system cannot, it goes through a temporary name.
    public func write(
        _ entries: [ZipEntry], to destination: String, observingBytes observer: ((UnsafeRawBufferPointer) -> Void)?
    ) throws -> (size: UInt64, observedAll: Bool) {
        do {
            return try writeNamed(entries, to: destination, observer: observer)
        } catch let error as FileError {
            throw ZipError(error)
        }
    }

    private func writeNamed(
        _ entries: [ZipEntry], to destination: String, observer: ((UnsafeRawBufferPointer) -> Void)?
    ) throws -> (size: UInt64, observedAll: Bool) {
        var seen = Set<String>()
        for entry in entries {
            try EntryName.validate(entry.name)
            guard seen.insert(entry.name).inserted else { throw ZipError.duplicateEntry(entry.name) }
        }
        guard entries.count <= limits.maximumEntries else {
            throw ZipError.limitExceeded(path: destination, reason: "\(entries.count) entries (limit \(limits.maximumEntries)); a client would refuse this archive")
        }
        let sorted = entries.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }

        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        if unnamedFiles, let out = OutputFile(unnamedIn: folder, reportingAs: destination, observer: observer) {
            defer { try? out.close() }
            try writeArchive(sorted, to: out, destination: destination)
            let size = out.offset
            if pendingSyncs != nil { try out.startWriteback() }
            switch try out.link(as: destination, syncingFirst: pendingSyncs == nil, temporaryName: { DurableFile.temporaryPath(beside: destination) }) {
            case .linked:
                try out.close()
                pendingSyncs?.add(destination)
                return (size, observer != nil && out.observedFinalBytes)
            case .unsupported:
                // The observer has seen these bytes; the second writing is read back instead.
                return (try writeThroughTemporaryName(sorted, to: destination, observer: nil).size, false)
            }
        }
        let (size, observedAll) = try writeThroughTemporaryName(sorted, to: destination, observer: observer)
        return (size, observer != nil && observedAll)
    }

    private func writeArchive(_ sorted: [ZipEntry], to out: OutputFile, destination: String) throws {
        var records: [CentralRecord] = []
        records.reserveCapacity(sorted.count)
        var tally = ArchiveLimits.Tally(limits)
        for entry in sorted {
            let record = try writeEntry(entry, to: out)
            // The client's own check, on the sizes it will read from the central directory.
            if let refusal = tally.add(entry.name, compressedSize: record.compressedSize, uncompressedSize: record.uncompressedSize) {
                throw ZipError.limitExceeded(path: destination, reason: refusal + "; a client would refuse this archive")
            }
            records.append(record)
        }
        if let refusal = tally.wholeArchiveRefusal() {
            throw ZipError.limitExceeded(path: destination, reason: refusal + "; a client would refuse this archive")
        }
        try writeCentralDirectory(records, to: out)
    }

    /// Writes to a temporary file beside `destination`, then renames it into place.
    private func writeThroughTemporaryName(
        _ sorted: [ZipEntry], to destination: String, observer: ((UnsafeRawBufferPointer) -> Void)?
    ) throws -> (size: UInt64, observedAll: Bool) {
        let temporary = DurableFile.temporaryPath(beside: destination)
        let out = try OutputFile(creating: temporary, observer: observer)
        do {
            try writeArchive(sorted, to: out, destination: destination)
            let size = out.offset
            if pendingSyncs == nil { try out.sync() } else { try out.startWriteback() }
            try out.close()
            guard rename(temporary, destination) == 0 else {
                throw ZipError.io(path: destination, operation: "rename", errno: errno)
            }
            pendingSyncs?.add(destination)
            return (size, out.observedFinalBytes)
        } catch {
            try? out.close()
            unlink(temporary)
            throw error
        }
    }

    private func writeEntry(_ entry: ZipEntry, to out: OutputFile) throws -> CentralRecord {
        let name = Array(entry.name.utf8)
        switch entry.source {
        case .bytes(let bytes):
            return try writePrepared(try prepare(bytes, name: entry.name), name: name, to: out)
        case .prepared(let prepared):
            return try writePrepared(prepared, name: name, to: out)
        case .file(let path):
            return try writeFile(path, known: nil, name: name, entryName: entry.name, to: out)
        case .checkedFile(let path, let checksum):
            return try writeFile(path, known: checksum, name: name, entryName: entry.name, to: out)
        case .copied(let copied):
            return try writeCopied(copied, name: name, to: out)
        }
    }

    /// The header from what is known, then the data read as it is: a source shorter than it
    /// should be is an error, never a truncated entry.
    private func writeCopied(_ copied: CopiedEntry, name: [UInt8], to out: OutputFile) throws -> CentralRecord {
        let record = CentralRecord(
            name: name, method: copied.method, crc32: copied.crc32,
            compressedSize: copied.compressedSize, uncompressedSize: copied.uncompressedSize,
            offset: out.offset, localZip64: copied.uncompressedSize >= Limits.u32 || copied.compressedSize >= Limits.u32)
        try out.write(record.localHeader())
        let input = try InputFile(path: copied.path)
        // The kernel copies where it can: a media file's bytes go from the published file to
        // the archive without being read into this process and written back.
        out.copiesInKernel = kernelCopies
        let done = try out.append(from: input, at: copied.offset, count: copied.compressedSize)
        if done < copied.compressedSize {
            throw ZipError.malformed(path: copied.path, reason: "ends before the \(copied.compressedSize) bytes the entry copies from it")
        }
        return record
    }

    private func writePrepared(_ prepared: PreparedEntry, name: [UInt8], to out: OutputFile) throws -> CentralRecord {
        let record = CentralRecord(
            name: name, method: prepared.method, crc32: prepared.crc32,
            compressedSize: prepared.compressedSize, uncompressedSize: prepared.uncompressedSize,
            offset: out.offset, localZip64: prepared.uncompressedSize >= Limits.u32)
        try out.write(record.localHeader())
        try out.write(prepared.payload)
        return record
    }

    private func writeFile(_ path: String, known: FileChecksum?, name: [UInt8], entryName: String, to out: OutputFile) throws -> CentralRecord {
        let input = try InputFile(path: path)
        let status = try input.status()
        let expectedSize = status.size
        let store = expectedSize == 0 || CompressionPolicy.isPrecompressed(entryName)
        if store && status.isRegular {
            return try writeStoredFile(input, status: status, known: known, name: name, to: out)
        }
        var record = CentralRecord(
            name: name, method: store ? .stored : .deflated, crc32: 0, compressedSize: 0,
            uncompressedSize: 0, offset: out.offset, localZip64: expectedSize >= Limits.u32)
        try out.write(record.localHeader())
        let dataStart = out.offset

        var buffer = [UInt8](repeating: 0, count: fileChunkSize)
        var (crc, readBytes) = (CRC32(), UInt64(0))
        if !store {
            (crc, readBytes) = try deflate(input, to: out, buffer: &buffer)
            if out.offset - dataStart >= readBytes {
                // Deflate made it bigger: start the entry's data again, stored.
                try out.truncate(to: dataStart)
                try input.rewind()
                record.method = .stored
            }
        }
        if record.method == .stored {
            (crc, readBytes) = try copy(input, to: out, buffer: &buffer)
        }
        if readBytes >= Limits.u32 && !record.localZip64 {
            throw ZipError.malformed(path: path, reason: "file grew past 4 GiB while it was being archived")
        }
        record.crc32 = crc.value
        record.uncompressedSize = readBytes
        record.compressedSize = out.offset - dataStart
        try out.patch(at: record.offset, record.localHeader())
        return record
    }

    /// Deflates what is left of `input` into `out`: the CRC-32 and length of what was read.
    private func deflate(_ input: InputFile, to out: OutputFile, buffer: inout [UInt8]) throws -> (CRC32, UInt64) {
        var crc = CRC32()
        var readBytes: UInt64 = 0
        let stream = try ZStream(.deflate(level: level))
        try buffer.withUnsafeMutableBytes { chunk in
            while true {
                let n = try input.read(into: chunk)
                let data = UnsafeRawBufferPointer(rebasing: chunk[0..<n])
                crc.update(data)
                readBytes += UInt64(n)
                try stream.deflate(data, finish: n == 0) { try out.write($0) }
                if n == 0 { break }
            }
        }
        return (crc, readBytes)
    }

    /// Copies what is left of `input` into `out` as it is: the CRC-32 and length of what was read.
    private func copy(_ input: InputFile, to out: OutputFile, buffer: inout [UInt8]) throws -> (CRC32, UInt64) {
        var crc = CRC32()
        var readBytes: UInt64 = 0
        try buffer.withUnsafeMutableBytes { chunk in
            while true {
                let n = try input.read(into: chunk)
                if n == 0 { break }
                let data = UnsafeRawBufferPointer(rebasing: chunk[0..<n])
                crc.update(data)
                readBytes += UInt64(n)
                try out.write(data)
            }
        }
        return (crc, readBytes)
    }

    /// A stored file in one pass over it, header first: the CRC comes from an earlier pass (or
    /// one over the file now), so nothing written is patched afterwards and an observer's hash
    /// of the archive stays valid. The data goes from the read buffer to the
    /// output with no copy in between.
    private func writeStoredFile(
        _ input: InputFile, status: InputFile.Status, known: FileChecksum?, name: [UInt8], to out: OutputFile
    ) throws -> CentralRecord {
        let crc: UInt32
        if let known, known.size == status.size, known.changed == status.changed {
            crc = known.crc32
        } else {
            var sweep = CRC32()
            try input.sweep(size: status.size) { sweep.update($0) }
            crc = sweep.value
        }
        var record = CentralRecord(
            name: name, method: .stored, crc32: crc, compressedSize: status.size,
            uncompressedSize: status.size, offset: out.offset, localZip64: status.size >= Limits.u32)
        try out.write(record.localHeader())
        // Checked again over the bytes as they go out (they are in the cache already): a file
        // rewritten within the file system's timestamp granularity looks unchanged, and the
        // header must describe what was written.
        var written = CRC32()
        try input.sweep(size: status.size) { piece in
            written.update(piece)
            try out.write(piece)
        }
        if written.value != crc {
            record.crc32 = written.value
            try out.patch(at: record.offset, record.localHeader())
        }
        return record
    }

    private func writeCentralDirectory(_ records: [CentralRecord], to out: OutputFile) throws {
        let start = out.offset
        for record in records {
            try out.write(record.centralHeader())
        }
        let size = out.offset - start
        let count = UInt64(records.count)
        var tail = ByteWriter()
        if count >= UInt64(Limits.u16) || size >= Limits.u32 || start >= Limits.u32 {
            let zip64Start = out.offset
            tail.u32(Signature.zip64EndOfCentralDirectory)
            tail.u64(44)
            tail.u16(Version.madeBy)
            tail.u16(Version.zip64)
            tail.u32(0)
            tail.u32(0)
            tail.u64(count)
            tail.u64(count)
            tail.u64(size)
            tail.u64(start)
            tail.u32(Signature.zip64Locator)
            tail.u32(0)
            tail.u64(zip64Start)
            tail.u32(1)
        }
        tail.u32(Signature.endOfCentralDirectory)
        tail.u16(0)
        tail.u16(0)
        tail.u16(UInt16(min(count, UInt64(Limits.u16))))
        tail.u16(UInt16(min(count, UInt64(Limits.u16))))
        tail.u32(UInt32(min(size, Limits.u32)))
        tail.u32(UInt32(min(start, Limits.u32)))
        tail.u16(0)
        try out.write(tail.bytes)
    }
}

enum Limits {
    static let u16: UInt16 = 0xFFFF
    static let u32: UInt64 = 0xFFFF_FFFF
}

enum Signature {
    static let localFile: UInt32 = 0x0403_4b50
    static let centralFile: UInt32 = 0x0201_4b50
    static let endOfCentralDirectory: UInt32 = 0x0605_4b50
    static let zip64EndOfCentralDirectory: UInt32 = 0x0606_4b50
    static let zip64Locator: UInt32 = 0x0706_4b50
}

enum Version {
    /// Unix, spec 4.5: external attributes then carry Unix permissions.
    static let madeBy: UInt16 = (3 << 8) | 45
    static let deflate: UInt16 = 20
    static let zip64: UInt16 = 45
}

/// Fixed metadata: every archive says 1980-01-01 00:00 and rw-r--r--, so bytes depend on content only.
enum FixedMetadata {
    static let dosTime: UInt16 = 0
    static let dosDate: UInt16 = (0 << 9) | (1 << 5) | 1
    static let utf8Flag: UInt16 = 1 << 11
    static let externalAttributes: UInt32 = UInt32(0o100644) << 16
}

/// What the central directory needs to know about one written entry.
struct CentralRecord {
    let name: [UInt8]
    var method: CompressionMethod
    var crc32: UInt32
    var compressedSize: UInt64
    var uncompressedSize: UInt64
    let offset: UInt64
    /// Decided before the data is written, from the input size, so the patched header keeps its length.
    var localZip64: Bool

    func localHeader() -> [UInt8] {
        var w = ByteWriter()
        w.u32(Signature.localFile)
        w.u16(localZip64 ? Version.zip64 : Version.deflate)
        w.u16(FixedMetadata.utf8Flag)
        w.u16(method.rawValue)
        w.u16(FixedMetadata.dosTime)
        w.u16(FixedMetadata.dosDate)
        w.u32(crc32)
        w.u32(localZip64 ? UInt32(Limits.u32) : UInt32(compressedSize))
        w.u32(localZip64 ? UInt32(Limits.u32) : UInt32(uncompressedSize))
        w.u16(UInt16(name.count))
        w.u16(localZip64 ? 20 : 0)
        w.append(name)
        if localZip64 {
            w.u16(0x0001)
            w.u16(16)
            w.u64(uncompressedSize)
            w.u64(compressedSize)
        }
        return w.bytes
    }

    func centralHeader() -> [UInt8] {
        var extra = ByteWriter()
        if uncompressedSize >= Limits.u32 { extra.u64(uncompressedSize) }
        if compressedSize >= Limits.u32 { extra.u64(compressedSize) }
        if offset >= Limits.u32 { extra.u64(offset) }
        let zip64 = !extra.bytes.isEmpty
        var w = ByteWriter()
        w.u32(Signature.centralFile)
        w.u16(Version.madeBy)
        w.u16(zip64 || localZip64 ? Version.zip64 : Version.deflate)
        w.u16(FixedMetadata.utf8Flag)
        w.u16(method.rawValue)
        w.u16(FixedMetadata.dosTime)
        w.u16(FixedMetadata.dosDate)
        w.u32(crc32)
        w.u32(UInt32(min(compressedSize, Limits.u32)))
        w.u32(UInt32(min(uncompressedSize, Limits.u32)))
        w.u16(UInt16(name.count))
        w.u16(zip64 ? UInt16(4 + extra.bytes.count) : 0)
        w.u16(0)
        w.u16(0)
        w.u16(0)
        w.u32(FixedMetadata.externalAttributes)
        w.u32(UInt32(min(offset, Limits.u32)))
        w.append(name)
        if zip64 {
            w.u16(0x0001)
            w.u16(UInt16(extra.bytes.count))
            w.append(extra.bytes)
        }
        return w.bytes
    }
}
