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
