#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem
import ZlibStream

/// Reads ZIP archives that may be hostile (a client's downloads, `coursepack verify`): parses
/// the central directory with every field checked, verifies CRCs, and extracts only into a new
/// folder, refusing path escapes, links, duplicates, overlapping entries and zip bombs.
public struct ZipReader {
    /// The client's limits, shared with the builder (`ArchiveLimits`).
    public typealias Limits = ArchiveLimits

    public struct Entry: Sendable, Equatable {
        public let name: String
        public let method: CompressionMethod
        public let crc32: UInt32
        public let compressedSize: UInt64
        public let uncompressedSize: UInt64
        let localHeaderOffset: UInt64
        public var isDirectory: Bool { name.hasSuffix("/") }
    }

    public let path: String
    public let entries: [Entry]
    private let bytes: ArchiveBytes
    private let limits: Limits

    public init(path: String, limits: Limits = .current) throws {
        let file: InputFile
        do {
            file = try InputFile(path: path)
        } catch {
            throw ZipError(error)
        }
        try self.init(.file(file), path: path, limits: limits)
    }

    /// An archive already in memory (a small download); `path` names it in errors.
    public init(bytes: [UInt8], path: String, limits: Limits = .current) throws {
        try self.init(.memory(bytes), path: path, limits: limits)
    }

    private init(_ bytes: ArchiveBytes, path: String, limits: Limits) throws {
        self.path = path
        self.limits = limits
        self.bytes = bytes
        entries = try Self.centralDirectory(bytes, path: path, limits: limits)
    }

    /// Reads and checks every entry without writing anything.
    public func verify() throws {
        try ZipError.mapping { try verifyEntries() }
    }

    private func verifyEntries() throws {
        let inflater = try ZStream(.inflate)
        for entry in entries where !entry.isDirectory {
            try stream(entry, inflater: inflater) { _ in }
        }
    }

    /// An entry's bytes (for small entries; large ones belong in `extract`).
    public func contents(of name: String) throws -> [UInt8] {
        guard let entry = entries.first(where: { $0.name == name }) else {
            throw ZipError.malformed(path: path, reason: "no entry \"\(name)\"")
        }
        var bytes: [UInt8] = []
        try ZipError.mapping { try stream(entry, inflater: try ZStream(.inflate)) { bytes.append(contentsOf: $0) } }
        return bytes
    }

    /// Extracts every entry into `folder`, which must not exist yet (so nothing already in it,
    /// such as a planted symlink, can redirect a write). On error the folder is removed.
    /// `synced`: every file and folder is on the disk when this returns, so renaming `folder`
    /// into place cannot publish entries a power cut would lose (the caller syncs its parent).
    /// Unsynced, the caller owns durability: a sync client unpacks many archives this way and
    /// then waits once for the whole file system (`DurableFile.syncFileSystem`).
    public func extract(into folder: String, synced: Bool = false) throws {
        try ZipError.mapping { try extractEntries(into: folder, synced: synced) }
    }

    private func extractEntries(into folder: String, synced: Bool) throws {
        guard mkdir(folder, 0o755) == 0 else { throw ZipError.io(path: folder, operation: "create folder", errno: errno) }
        var folders: Set<String> = [folder]
        do {
            // One inflater for the archive, reset between entries: a new one per entry costs
            // its window and output buffer each time, and most entries are a few KB.
            let inflater = try ZStream(.inflate)
            for entry in entries {
                let parts = entry.name.split(separator: "/")
                var current = folder
                for part in entry.isDirectory ? parts[...] : parts.dropLast() {
                    current += "/" + part
                    guard folders.insert(current).inserted else { continue }
                    if mkdir(current, 0o755) != 0 && errno != EEXIST {
                        throw ZipError.io(path: current, operation: "create folder", errno: errno)
                    }
                }
                guard !entry.isDirectory else { continue }
                try writeFile(entry, to: folder + "/" + entry.name, inflater: inflater, synced: synced)
            }
            if synced {
                for path in folders.sorted(by: { $0.count > $1.count }) { try Self.syncFolder(path) }
            }
        } catch {
            Self.removeTree(folder)
            throw error
        }
    }

    /// One entry to a new file, each piece written as it comes out of the archive (a stored
    /// entry in memory in one write; otherwise pieces of up to 256 KB), without an extra buffer.
    private func writeFile(_ entry: Entry, to target: String, inflater: ZStream, synced: Bool) throws {
        // O_EXCL and O_NOFOLLOW: the staging folder is new, so anything already at the name is
        // not ours to write through.
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ZipError.io(path: target, operation: "create", errno: errno) }
        var open = true
        defer { if open { close(fd) } }
        try stream(entry, inflater: inflater) { chunk in
            var done = 0
            while done < chunk.count {
                let n = write(fd, chunk.baseAddress! + done, chunk.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ZipError.io(path: target, operation: "write", errno: errno)
                }
                done += n
            }
        }
        if synced, fsync(fd) != 0 { throw ZipError.io(path: target, operation: "fsync", errno: errno) }
        open = false
        guard close(fd) == 0 else { throw ZipError.io(path: target, operation: "close", errno: errno) }
    }

    /// Makes the entries of `path` durable (their names, not their data).
    public static func syncFolder(_ path: String) throws {
        do {
            try DurableFile.syncFolder(path)
        } catch {
            throw ZipError(error)
        }
    }

    /// Streams an entry's uncompressed bytes through `sink`, checking its size and CRC.
    /// `inflater` is reset first, so one can serve every entry of an archive.
    private func stream(_ entry: Entry, inflater: ZStream, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let header = try bytes.read(at: entry.localHeaderOffset, count: 30, path: path)
        var reader = ByteReader(header)
        guard reader.u32() == Signature.localFile else {
            throw ZipError.malformed(path: path, reason: "entry \"\(entry.name)\" has no local header where the directory says")
        }
        reader.position = 26
        let nameLength = UInt64(reader.u16() ?? 0)
        let extraLength = UInt64(reader.u16() ?? 0)
        var remaining = entry.compressedSize
        var offset = entry.localHeaderOffset + 30 + nameLength + extraLength
        var produced: UInt64 = 0
        var crc = CRC32()
        let deflated = entry.method == .deflated
        if deflated { inflater.reset() }
        var ended = !deflated
        func check(_ chunk: UnsafeRawBufferPointer) throws {
            produced += UInt64(chunk.count)
            guard produced <= entry.uncompressedSize else {
                throw ZipError.limitExceeded(path: path, reason: "entry \"\(entry.name)\" expands past its declared \(entry.uncompressedSize) bytes")
            }
            crc.update(chunk)
            try sink(chunk)
        }
        // In memory, an entry is one piece; from a file, pieces of a bounded size.
        let pieceSize: UInt64
        if case .memory = bytes { pieceSize = .max } else { pieceSize = UInt64(fileChunkSize) }
        while remaining > 0 {
            let count = Int(min(remaining, pieceSize))
            try bytes.withBytes(at: offset, count: count, path: path) { raw in
                if deflated {
                    let (streamEnded, _) = try inflater.inflate(raw, sink: check)
                    ended = ended || streamEnded
                } else {
                    try check(raw)
                }
            }
            offset += UInt64(count)
            remaining -= UInt64(count)
        }
        guard ended else { throw ZipError.malformed(path: path, reason: "entry \"\(entry.name)\" ends before its compressed data does") }
        guard produced == entry.uncompressedSize else {
            throw ZipError.malformed(path: path, reason: "entry \"\(entry.name)\" holds \(produced) bytes, not the declared \(entry.uncompressedSize)")
        }
        guard crc.value == entry.crc32 else { throw ZipError.crcMismatch(path: path, entry: entry.name) }
    }

    private static func centralDirectory(_ file: ArchiveBytes, path: String, limits: Limits) throws -> [Entry] {
        func bad(_ reason: String) -> ZipError { .malformed(path: path, reason: reason) }
        let directory = try locateCentralDirectory(file, path: path)
        guard directory.count <= UInt64(limits.maximumEntries) else {
            throw ZipError.limitExceeded(path: path, reason: "\(directory.count) entries (limit \(limits.maximumEntries))")
        }
        guard directory.offset <= directory.end, directory.size <= directory.end - directory.offset, directory.size <= 256 << 20 else {
            throw bad("central directory out of bounds (truncated?)")
        }
        var cd = ByteReader(try file.read(at: directory.offset, count: Int(directory.size), path: path))
        var entries: [Entry] = []
        var names = Set<String>()
        var tally = ArchiveLimits.Tally(limits)
        for _ in 0..<directory.count {
            let entry = try centralRecord(&cd, number: entries.count + 1, path: path)
            let name = entry.name
            guard names.insert(name).inserted else { throw ZipError.unsafeEntry(path: path, entry: name, reason: "appears twice") }
            if let refusal = tally.add(name, compressedSize: entry.compressedSize, uncompressedSize: entry.uncompressedSize) {
                throw ZipError.limitExceeded(path: path, reason: refusal)
            }
            guard entry.localHeaderOffset < directory.offset, entry.compressedSize <= directory.offset - entry.localHeaderOffset else {
                throw bad("entry \"\(name)\" lies outside the archive data")
            }
            entries.append(entry)
        }
        // Entries whose data overlap are how non-recursive zip bombs multiply one payload.
        let ordered = entries.sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        for (a, b) in zip(ordered, ordered.dropFirst()) where a.localHeaderOffset + 30 + a.compressedSize > b.localHeaderOffset {
            throw ZipError.limitExceeded(path: path, reason: "entries \"\(a.name)\" and \"\(b.name)\" overlap (a zip bomb?)")
        }
        // Many entries each small enough to pass alone can still make a bomb together.
        if let refusal = tally.wholeArchiveRefusal() { throw ZipError.limitExceeded(path: path, reason: refusal) }
        return entries
    }

    /// Where the end records say the central directory is: its entry count, size and offset,
    /// and where the end records begin (nothing of the directory may lie past that).
    private struct DirectoryLocation {
        var count: UInt64
        var size: UInt64
        var offset: UInt64
        var end: UInt64
    }

    /// The end of central directory record, found from the end of the file, and its ZIP64
    /// record when the classic fields are saturated.
    private static func locateCentralDirectory(_ file: ArchiveBytes, path: String) throws -> DirectoryLocation {
        func bad(_ reason: String) -> ZipError { .malformed(path: path, reason: reason) }
        let size = try file.size
        guard size >= 22 else { throw bad("too short to be a ZIP archive (\(size) bytes)") }
        let tailLength = Int(min(size, 22 + 0xFFFF))
        let tail = try file.read(at: size - UInt64(tailLength), count: tailLength, path: path)
        var eocd: Int?
        var i = tailLength - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 0x05, tail[i + 3] == 0x06,
                i + 22 + Int(UInt16(tail[i + 20]) | UInt16(tail[i + 21]) << 8) == tailLength
            {
                eocd = i
                break
            }
            i -= 1
        }
        guard let eocd else { throw bad("no end of central directory record (truncated?)") }
        let eocdOffset = size - UInt64(tailLength) + UInt64(eocd)
        var r = ByteReader(tail, at: eocd + 8)
        var location = DirectoryLocation(count: UInt64(r.u16() ?? 0), size: 0, offset: 0, end: eocdOffset)
        _ = r.u16()
        location.size = UInt64(r.u32() ?? 0)
        location.offset = UInt64(r.u32() ?? 0)
        guard location.count == 0xFFFF || location.size == 0xFFFF_FFFF || location.offset == 0xFFFF_FFFF else { return location }
        guard eocdOffset >= 20 else { throw bad("ZIP64 locator missing") }
        var locator = ByteReader(try file.read(at: eocdOffset - 20, count: 20, path: path))
        guard locator.u32() == Signature.zip64Locator else { throw bad("ZIP64 locator missing") }
        _ = locator.u32()
        let recordOffset = locator.u64() ?? 0
        // The offset is the archive's word: compare by subtraction so a value near 2^64 cannot wrap.
        guard eocdOffset >= 56, recordOffset <= eocdOffset - 56 else { throw bad("ZIP64 record out of bounds") }
        var record = ByteReader(try file.read(at: recordOffset, count: 56, path: path))
        guard record.u32() == Signature.zip64EndOfCentralDirectory else { throw bad("ZIP64 record missing") }
        record.position = 32
        location.count = record.u64() ?? 0
        location.size = record.u64() ?? 0
        location.offset = record.u64() ?? 0
        return location
    }

    /// One central directory record, refused when it is encrypted, compressed another way,
    /// unsafely named, or a link or special file.
    private static func centralRecord(_ cd: inout ByteReader, number: Int, path: String) throws -> Entry {
        func bad(_ reason: String) -> ZipError { .malformed(path: path, reason: reason) }
        guard cd.u32() == Signature.centralFile else { throw bad("central directory entry \(number) is damaged") }
        guard let madeBy = cd.u16(), cd.u16() != nil, let flags = cd.u16(), let methodRaw = cd.u16(),
            cd.u32() != nil, let crc = cd.u32(), let compressed32 = cd.u32(), let uncompressed32 = cd.u32(),
            let nameLength = cd.u16(), let extraLength = cd.u16(), let commentLength = cd.u16(),
            cd.u16() != nil, cd.u16() != nil, let external = cd.u32(), let offset32 = cd.u32(),
            let nameBytes = cd.take(Int(nameLength)), let extra = cd.take(Int(extraLength)), cd.take(Int(commentLength)) != nil
        else { throw bad("central directory is truncated") }
        let name = String(decoding: nameBytes, as: UTF8.self)
        guard flags & 1 == 0 else { throw ZipError.unsafeEntry(path: path, entry: name, reason: "encrypted entries are not supported") }
        guard let method = CompressionMethod(rawValue: methodRaw) else {
            throw ZipError.unsafeEntry(path: path, entry: name, reason: "compression method \(methodRaw) is not supported")
        }
        var compressed = UInt64(compressed32)
        var uncompressed = UInt64(uncompressed32)
        var offset = UInt64(offset32)
        var fields = ByteReader(Array(extra))
        while let id = fields.u16(), let length = fields.u16(), let data = fields.take(Int(length)) {
            guard id == 0x0001 else { continue }
            var zip64 = ByteReader(Array(data))
            if uncompressed32 == 0xFFFF_FFFF { uncompressed = zip64.u64() ?? uncompressed }
            if compressed32 == 0xFFFF_FFFF { compressed = zip64.u64() ?? compressed }
            if offset32 == 0xFFFF_FFFF { offset = zip64.u64() ?? offset }
        }
        let isDirectory = name.hasSuffix("/")
        do {
            try EntryName.validate(isDirectory ? String(name.dropLast()) : name)
        } catch {
            throw ZipError.unsafeEntry(path: path, entry: name, reason: "\(error)")
        }
        let unixMode = madeBy >> 8 == 3 ? (external >> 16) & 0o170000 : 0
        guard unixMode == 0 || unixMode == 0o100000 || unixMode == 0o040000 else {
            throw ZipError.unsafeEntry(path: path, entry: name, reason: "a symbolic link or special file")
        }
        return Entry(name: name, method: method, crc32: crc, compressedSize: compressed, uncompressedSize: uncompressed, localHeaderOffset: offset)
    }

    /// Removes a file or folder tree without following symlinks out of it.
    public static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR, let dir = opendir(path) {
            var children: [String] = []
            while let entry = readdir(dir) {
                let name = DirectoryEntry.name(of: entry)
                if !DirectoryEntry.isDotOrDotDot(name) { children.append(String(decoding: name, as: UTF8.self)) }
            }
            closedir(dir)
            for child in children { removeTree(path + "/" + child) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
