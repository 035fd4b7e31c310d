/// Finding ASCII tags in a page's bytes without decoding it: pages may hold any bytes.
public enum ByteSearch {
    /// ASCII case-insensitive search for an ASCII needle.
    public static func containsCaseInsensitive(_ haystack: [UInt8], _ needle: String) -> Bool {
        firstCaseInsensitive(haystack, needle, from: 0) != nil
    }

    public static func firstCaseInsensitive(_ haystack: [UInt8], _ needle: String, from start: Int) -> Int? {
        let pin = Array(needle.lowercased().utf8)
        guard let first = pin.first, haystack.count >= pin.count, start <= haystack.count - pin.count else { return nil }
        return haystack.withUnsafeBufferPointer { hay in
            var i = start
            let last = hay.count - pin.count
            while i <= last {
                if lower(hay[i]) == first {
                    var j = 1
                    while j < pin.count && lower(hay[i + j]) == pin[j] { j += 1 }
                    if j == pin.count { return i }
                }
                i += 1
            }
            return nil
        }
    }

    public static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }
}
