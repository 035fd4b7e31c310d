#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file read whole into memory, only when it is a regular file of at most a given size: the
/// size is checked before anything is read, and no more than that is ever held, however the file
/// grows meanwhile. Every file of this program's own state and every kept manifest is read this
/// way: a sparse 10 GB `manifest.json` in a target once made `status` hold 21 GB, and a FIFO in
/// its place made it wait forever.
public enum WholeFile {
    /// A kept course manifest: as large as a split manifest the client assembles
    /// (`ManifestLimits.maximumSplitSize`), with room for the JSON that joins its parts.
    public static let manifestLimit: UInt64 = (1 << 30) + (64 << 20)
    /// Any other state file (a target's `target.json`, inventories, outboxes, a build's records).
    public static let stateLimit: UInt64 = 512 << 20

    /// The errno of the error for a file over its limit.
    public static let tooLargeErrno = EFBIG

    /// The file's bytes, or nil when there is no file at `path`.
    public static func read(_ path: String, atMost limit: UInt64) throws(FileError) -> [UInt8]? {
        let file: InputFile
        do {
            file = try InputFile(path: path)
        } catch {
            if error.errno == ENOENT || error.errno == ENOTDIR { return nil }
            throw error
        }
        let size = try file.size
        guard size <= limit else {
            throw FileError(path: path, operation: "read", errno: tooLargeErrno, reason: "\(size) bytes, larger than the \(limit) bytes such a file may hold: refused unread")
        }
        // One byte more than the size: a file that grew meanwhile is refused, never held past it.
        let bytes = try file.read(at: 0, count: Int(size) + 1)
        guard UInt64(bytes.count) <= size else {
            throw FileError(path: path, operation: "read", errno: tooLargeErrno, reason: "it grew while it was read: refused")
        }
        return bytes
    }

    /// As `read`, nil also when the file cannot be read: for caches and state that are made
    /// again when lost.
    public static func readIfUsable(_ path: String, atMost limit: UInt64) -> [UInt8]? {
        (try? read(path, atMost: limit)) ?? nil
    }
}
