import FileSystem

/// What a client accepts in an archive, in one place: `ZipReader` refuses archives past these
/// limits as zip bombs, and the builder (`ZipWriter`, the packager's course files) checks what
/// it writes against the same values, so that it never publishes what its clients would refuse.
/// Entry names follow `EntryName` on both sides; the manifest's own limits are
/// `ManifestLimits`.
public struct ArchiveLimits: Sendable, Equatable {
    public var maximumEntries = 100_000
    public var maximumTotalSize: UInt64 = 16 << 30
    /// Uncompressed/compressed ratio above which an entry, and the archive as a whole, is
    /// refused: many small bombs are as bad as one large one.
    public var maximumRatio: UInt64 = 500
    /// Bytes past `maximumRatio` times the compressed size that an entry or the whole archive
    /// may still expand to, so that a short page or an empty file (which deflate shrinks to a
    /// few bytes) is not taken for a bomb.
    public var ratioAllowance: UInt64 = 64 << 10
    /// A course file (under `static/`) larger than this is left out of a build, with a warning,
    /// and refused by a client: it is never hashed, stored or downloaded. A 100 GB file once
    /// took seven minutes to hash before a build did anything.
    public var maximumCourseFileSize: UInt64 = 4 << 30

    public init() {}

    /// The limits in force: the defaults, each lowered (never raised) by `LoweredLimits`
    /// (`entries`, `total`, `ratio`, `file`).
    public static var current: ArchiveLimits {
        var limits = ArchiveLimits()
        limits.maximumEntries = LoweredLimits.lowered(limits.maximumEntries, by: "entries")
        limits.maximumTotalSize = LoweredLimits.lowered(limits.maximumTotalSize, by: "total")
        limits.maximumRatio = LoweredLimits.lowered(limits.maximumRatio, by: "ratio")
        limits.maximumCourseFileSize = LoweredLimits.lowered(limits.maximumCourseFileSize, by: "file")
        return limits
    }

    /// Every limit, for a build's inputs: which archives the writer refuses depends on them all.
    public var fingerprint: String {
        "entries=\(maximumEntries),total=\(maximumTotalSize),ratio=\(maximumRatio)+\(ratioAllowance),file=\(maximumCourseFileSize)"
    }

    /// Whether `uncompressed` bytes from `compressed` stay within the ratio.
    public func ratioHolds(uncompressed: UInt64, compressed: UInt64) -> Bool {
        let (scaled, overflow) = compressed.multipliedReportingOverflow(by: maximumRatio)
        if overflow { return true }
        let (bound, overflowAgain) = scaled.addingReportingOverflow(ratioAllowance)
        return overflowAgain || uncompressed <= bound
    }

    /// An archive's entries checked one by one as they are listed, then as a whole: the reader
    /// runs it over a central directory, the writer over what it has just written.
    public struct Tally: Sendable {
        public let limits: ArchiveLimits
        public private(set) var entries = 0
        public private(set) var total: UInt64 = 0
        public private(set) var compressed: UInt64 = 0

        public init(_ limits: ArchiveLimits) { self.limits = limits }

        /// Why an archive holding this entry too is refused, or nil.
        public mutating func add(_ name: String, compressedSize: UInt64, uncompressedSize: UInt64) -> String? {
            entries += 1
            guard entries <= limits.maximumEntries else { return "more than \(limits.maximumEntries) entries" }
            guard limits.ratioHolds(uncompressed: uncompressedSize, compressed: compressedSize) else {
                return "entry \"\(name)\" claims \(uncompressedSize) bytes from \(compressedSize) (a zip bomb?)"
            }
            let (sum, overflow) = total.addingReportingOverflow(uncompressedSize)
            guard !overflow, sum <= limits.maximumTotalSize else { return "entries total more than \(limits.maximumTotalSize) bytes" }
            total = sum
            let (compressedSum, wrapped) = compressed.addingReportingOverflow(compressedSize)
            compressed = wrapped ? .max : compressedSum
            return nil
        }

        /// Many entries each small enough to pass alone can still make a bomb together.
        public func wholeArchiveRefusal() -> String? {
            guard !limits.ratioHolds(uncompressed: total, compressed: compressed) else { return nil }
            return "\(entries) entries claim \(total) bytes from \(compressed) (a zip bomb?)"
        }
    }
}
