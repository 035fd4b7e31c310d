/// A file's size and CRC-32, learned in a pass over its bytes, with the change time it had then:
/// an archive writer given it writes the entry's header before the data (nothing to patch, so a
/// hash of the archive taken while it is written stays valid) unless the file changed since.
public struct FileChecksum: Sendable, Equatable {
    public let size: UInt64
    public let crc32: UInt32
    /// The file's status change time (ctime, nanoseconds) when it was read.
    public let changed: Int64
}
