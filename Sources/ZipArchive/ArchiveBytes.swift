#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem

/// Where a `ZipReader` reads an archive from: a file, or memory, for a small download that
/// never needs to touch the disk before it is unpacked.
enum ArchiveBytes {
    case file(InputFile)
    case memory([UInt8])

    var size: UInt64 {
        get throws {
            switch self {
            case .file(let file):
                do { return try file.size } catch { throw ZipError(error) }
            case .memory(let bytes):
                return UInt64(bytes.count)
            }
        }
    }

    /// Calls `body` with `count` bytes from `offset`: a view into memory, or a buffer read from
    /// the file. Throws when the archive is shorter than its records say; `path` names it.
    func withBytes<Result>(
        at offset: UInt64, count: Int, path: String, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        switch self {
        case .file(let file):
            let bytes: [UInt8]
            do { bytes = try file.read(at: offset, count: count) } catch { throw ZipError(error) }
            guard bytes.count == count else { throw ZipError.malformed(path: path, reason: "unexpected end of file") }
            return try bytes.withUnsafeBytes(body)
        case .memory(let bytes):
            guard offset <= UInt64(bytes.count), UInt64(count) <= UInt64(bytes.count) - offset else {
                throw ZipError.malformed(path: path, reason: "unexpected end of file")
            }
            return try bytes.withUnsafeBytes { raw in
                try body(UnsafeRawBufferPointer(rebasing: raw[Int(offset)..<Int(offset) + count]))
            }
        }
    }

    /// `count` bytes from `offset`, copied (for records that are parsed field by field).
    func read(at offset: UInt64, count: Int, path: String) throws -> [UInt8] {
        try withBytes(at: offset, count: count, path: path) { Array($0) }
    }
}
