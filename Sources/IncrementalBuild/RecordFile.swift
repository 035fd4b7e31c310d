import FileSystem
import Foundation
import ZlibStream

/// A state file of records, each a list of byte fields, for caches too large for JSON to be
/// cheap (the search index's text): a format line, then for each record its field count and
/// each field's length (32-bit little-endian) and bytes, then the CRC-32 of all that. A file
/// that is missing, of another format, whose checksum does not match or that does not end
/// exactly after its last record reads as no records: a cache is then rebuilt, never trusted.
/// A cache feeds archive bytes (compressed pieces of the search index), so a flipped bit on
/// the disk must cost a rebuild, not a publish that fails its own CRC on every device. It is
/// replaced through a rename, so a reader sees the old file or the new one, never a mix.
public struct RecordFile: Sendable {
    public private(set) var bytes: [UInt8]

    /// `capacity`: the bytes the records will take (`recordSize`). Reserved at once with the
    /// checksum's four: a buffer that outgrows its reservation is copied into one twice as
    /// large, and the largest of these files is 41 MB at 100,000 blocks, at the build's peak.
    public init(format: String, capacity: Int = 0) {
        bytes = Array((format + "\n").utf8)
        bytes.reserveCapacity(bytes.count + capacity + 4)
    }

    /// The bytes a record of fields of these lengths takes in the file.
    public static func recordSize(fieldLengths: some Collection<Int>) -> Int {
        4 + 4 * fieldLengths.count + fieldLengths.reduce(0, +)
    }

    public mutating func add(_ fields: [ArraySlice<UInt8>]) {
        append(UInt32(fields.count))
        for field in fields {
            append(UInt32(field.count))
            bytes.append(contentsOf: field)
        }
    }

    /// An integer as a field: eight bytes, little-endian.
    public static func field(_ value: Int64) -> ArraySlice<UInt8> {
        withUnsafeBytes(of: value.littleEndian) { ArraySlice($0) }
    }

    /// The integer a `field(_:)` holds; nil for a field of another length.
    public static func integer(_ field: ArraySlice<UInt8>) -> Int64? {
        guard field.count == 8 else { return nil }
        return Int64(bitPattern: field.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    private mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Written beside `path` and renamed into place; `synced`: the file and then its folder
    /// are synced too, for a file whose loss would be wrong rather than slow. A cache is saved
    /// unsynced: after a power cut it is the old one, missing or failing its checksum, and each
    /// costs a rebuild of what it held, nothing else. A build's state is several such files,
    /// and each sync is a flush of the disk.
    ///
    /// The checksum is appended in place, into the room `init` reserved for it, where a copy to
    /// seal the file would double the buffer.
    public mutating func save(to path: String, synced: Bool) {
        let crc = CRC32.checksum(bytes)
        withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
        try? DurableFile.replace(path, with: bytes, synced: synced)
    }

    /// The records of the file at `path`, each field a slice of one buffer; nil when the file
    /// is missing, of another format or damaged.
    public static func load(_ path: String, format: String) -> [[ArraySlice<UInt8>]]? {
        guard let bytes = WholeFile.readIfUsable(path, atMost: WholeFile.stateLimit) else { return nil }
        let header = Array((format + "\n").utf8)
        guard bytes.starts(with: header), bytes.count >= header.count + 4 else { return nil }
        let end = bytes.count - 4
        let stored = bytes[end...].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var crc = CRC32()
        bytes.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[..<end])) }
        guard crc.value == stored else { return nil }
        return records(in: bytes, from: header.count, to: end)
    }

    /// The first record of the file at `path`, read from its first `prefix` bytes alone: for a
    /// summary that a writer puts first, read without the rest of the file. Its checksum is not
    /// checked (it covers the whole file), so the answer is a hint: a file that fails its
    /// checksum when `load` reads it is no cache, whatever its first record says. Nil when the
    /// file is missing, of another format, or its first record does not end within `prefix`.
    public static func firstRecord(_ path: String, format: String, prefix: Int = 4096) -> [ArraySlice<UInt8>]? {
        guard let file = try? InputFile(path: path), let bytes = try? file.read(at: 0, count: prefix) else { return nil }
        let header = Array((format + "\n").utf8)
        guard bytes.starts(with: header) else { return nil }
        return records(in: bytes, from: header.count, to: bytes.count, limit: 1)?.first
    }

    /// The records between `start` and `end`, at most `limit`; nil when a record runs past `end`.
    private static func records(in bytes: [UInt8], from start: Int, to end: Int, limit: Int = .max) -> [[ArraySlice<UInt8>]]? {
        var position = start
        func number() -> Int? {
            guard end - position >= 4 else { return nil }
            var value: UInt32 = 0
            for shift in 0..<4 { value |= UInt32(bytes[position + shift]) << (8 * shift) }
            position += 4
            return Int(value)
        }
        var records: [[ArraySlice<UInt8>]] = []
        while position < end, records.count < limit {
            guard let count = number() else { return nil }
            var fields: [ArraySlice<UInt8>] = []
            fields.reserveCapacity(min(count, 64))
            for _ in 0..<count {
                guard let length = number(), end - position >= length else { return nil }
                fields.append(bytes[position..<(position + length)])
                position += length
            }
            records.append(fields)
        }
        return records
    }
}
