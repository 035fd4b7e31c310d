#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `readdir` record read where it lies. glibc packs records into its buffer at their own
/// length (`d_reclen`), which for a short name is far less than `MemoryLayout<dirent>.size`:
/// a copy of the record, or of its 256-byte `d_name`, reads past the last one in the buffer,
/// and crashed when that buffer ended at an unmapped page (a walk of 100,000 course files, one
/// run in ten). Every listing in coursepack reads names through here.
public enum DirectoryEntry {
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
    private static let typeOffset = MemoryLayout<dirent>.offset(of: \dirent.d_type) ?? 18

    /// The entry's name, without its terminating NUL; valid until the next `readdir` of its stream.
    public static func name(of entry: UnsafePointer<dirent>) -> UnsafeBufferPointer<UInt8> {
        let start = (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: UInt8.self)
        return UnsafeBufferPointer(start: start, count: strlen(UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)))
    }

    /// The entry's type as the folder gives it (`DT_REG`, `DT_DIR`, … or `DT_UNKNOWN`).
    public static func type(of entry: UnsafePointer<dirent>) -> UInt8 {
        UnsafeRawPointer(entry).load(fromByteOffset: typeOffset, as: UInt8.self)
    }

    /// Whether the entry is "." or "..".
    public static func isDotOrDotDot(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        let dot = UInt8(ascii: ".")
        return (name.count == 1 && name[0] == dot) || (name.count == 2 && name[0] == dot && name[1] == dot)
    }
}
