import FileSystem

/// Block files a load may take from an earlier read instead of the disk. At 100,000 blocks,
/// opening and reading 123,000 small definition files was most of a one-block edit's load, and
/// several seconds once the page cache had let them go. Whoever keeps them decides when a stamp
/// vouches for the bytes; the load parses and checks them exactly as if it had read them.
public protocol KnownBlockFiles: Sendable {
    /// The export folder (canonical) the files were read from: a load of another ignores them.
    var root: String { get }
    /// The bytes that `path` (export-relative) held when it had `stamp`; nil when not known.
    func bytes(of path: String, stamp: FileStamp) -> [UInt8]?
}

/// A block definition file as a load read it: its stamp, taken before it was read, and its
/// bytes, for a keeper of `KnownBlockFiles` to keep for the next load.
public struct ReadBlockFile: Sendable {
    public let path: String
    public let stamp: FileStamp
    public let bytes: [UInt8]
    /// False when the bytes came from `KnownBlockFiles`.
    public let fromDisk: Bool

    public init(path: String, stamp: FileStamp, bytes: [UInt8], fromDisk: Bool) {
        (self.path, self.stamp, self.bytes, self.fromDisk) = (path, stamp, bytes, fromDisk)
    }
}
