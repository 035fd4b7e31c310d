#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension String {
    /// Whether `needle`'s UTF-8 bytes occur in this string's, byte for byte: file names are
    /// bytes. Foundation's `contains` bridges both strings to `NSString` for each call, a tenth of
    /// a second over the 100,000 names of a big output folder.
    public func containsUTF8(_ needle: String) -> Bool {
        var haystack = self
        var needle = needle
        return haystack.withUTF8 { text in
            needle.withUTF8 { part in
                guard !part.isEmpty else { return true }
                guard text.count >= part.count, let start = text.baseAddress, let wanted = part.baseAddress else { return false }
                // Needles are a few bytes (".tmp-", a marker): a scan for the first byte suffices.
                for offset in 0...(text.count - part.count) where text[offset] == part[0] {
                    if memcmp(start + offset, wanted, part.count) == 0 { return true }
                }
                return false
            }
        }
    }
}

/// Byte strings in the order `lexicographicallyPrecedes` gives them, compared with `memcmp`:
/// the folder walks that stamp a course, an output or a device sort each folder's names, and the
/// generic comparison was a tenth of stamping 100,000 files.
public enum ByteOrder {
    public static func precedes(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        let common = min(left.count, right.count)
        let order = common == 0 ? 0 : left.withUnsafeBytes { l in right.withUnsafeBytes { r in memcmp(l.baseAddress!, r.baseAddress!, common) } }
        return order != 0 ? order < 0 : left.count < right.count
    }
}
