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

    /// A folder's entries (without "." and ".."), each typed as the folder gives it, with an
    /// `lstat` only where it does not say; nil when the folder cannot be opened. In the folder's
    /// own order. `FileManager` made a Foundation string of every name and then looked up each
    /// one's type: listing an output folder of 3,000 archives and 3,000 contents at the start
    /// and end of every build was a tenth of a one-page edit.
    public static func entries(of folder: String) -> [(name: String, kind: Kind)]? {
        guard let stream = opendir(folder) else { return nil }
        defer { closedir(stream) }
        var entries: [(name: String, kind: Kind)] = []
        while let entry = readdir(stream) {
            let bytes = name(of: entry)
            if isDotOrDotDot(bytes) { continue }
            let name = String(decoding: bytes, as: UTF8.self)
            let kind: Kind
            switch Int(type(of: entry)) {
            case Int(DT_DIR): kind = .folder
            case Int(DT_REG): kind = .file
            case Int(DT_LNK): kind = .link
            case Int(DT_UNKNOWN):
                var info = stat()
                guard lstat(folder + "/" + name, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR: kind = .folder
                case S_IFREG: kind = .file
                case S_IFLNK: kind = .link
                default: kind = .other
                }
            default: kind = .other
            }
            entries.append((name, kind))
        }
        return entries
    }

    public enum Kind: Sendable, Equatable {
        case file, folder, link, other
    }
}
