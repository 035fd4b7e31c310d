#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a client accepts from a publish, in one place: `ZipReader` refuses archives past these
/// limits as zip bombs, the sync refuses a larger manifest, and the builder (`ZipWriter`, the
/// packager's manifest step) checks what it writes against the same values, so that it never
/// publishes what its clients would refuse. Entry names follow `EntryName` on both sides.
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
    /// A server's manifest larger than this is refused: a hostile or broken server cannot make
    /// a client hold more than this in memory.
    public var maximumManifestSize = 64 << 20
    /// A split manifest (`manifest-index.json` and its parts): each file is held to
    /// `maximumManifestSize`, and all its parts together to this, which bounds what a client
    /// assembles in memory.
    public var maximumSplitManifestSize: UInt64 = 1 << 30
    /// A course file (under `static/`) larger than this is left out of a build, with a warning,
    /// and refused by a client: it is never hashed, stored or downloaded. A 100 GB file once
    /// took seven minutes to hash before a build did anything.
    public var maximumCourseFileSize: UInt64 = 4 << 30

    public init() {}

    /// The limits in force: the defaults, each lowered (never raised) by
    /// `COURSEPACK_LOWER_LIMITS=entries=N,total=N,ratio=N,manifest=N,split=N,file=N`, which lets tests reach
    /// a limit without building gigabytes, and applies to builder and client alike.
    public static var current: ArchiveLimits {
        var limits = ArchiveLimits()
        guard let raw = getenv("COURSEPACK_LOWER_LIMITS") else { return limits }
        for pair in String(cString: raw).split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = UInt64(parts[1]) else { continue }
            switch parts[0] {
            case "entries": limits.maximumEntries = min(limits.maximumEntries, Int(clamping: value))
            case "total": limits.maximumTotalSize = min(limits.maximumTotalSize, value)
            case "ratio": limits.maximumRatio = min(limits.maximumRatio, value)
            case "manifest": limits.maximumManifestSize = min(limits.maximumManifestSize, Int(clamping: value))
            case "split": limits.maximumSplitManifestSize = min(limits.maximumSplitManifestSize, value)
            case "file": limits.maximumCourseFileSize = min(limits.maximumCourseFileSize, value)
            default: continue
            }
        }
        return limits
    }

    /// Every limit, for a build's inputs: which archives the writer refuses depends on them all.
    public var fingerprint: String {
        "entries=\(maximumEntries),total=\(maximumTotalSize),ratio=\(maximumRatio)+\(ratioAllowance),manifest=\(maximumManifestSize),"
            + "split=\(maximumSplitManifestSize),file=\(maximumCourseFileSize)"
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
