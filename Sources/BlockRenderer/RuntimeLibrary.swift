/// What the LMS gives course HTML that an offline page must get from the shared runtime archive.
public enum RuntimeLibrary: String, Sendable, Comparable, CaseIterable {
    /// jQuery as `$` and `jQuery`: course scripts (accordions, "show code" buttons) assume it.
    case jquery
    /// TeX between `\(…\)`, `\[…\]` or `$$…$$` rendered as math, as MathJax does in the LMS.
    case math

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// How `requires_network` names the library when a build has no runtime to bundle.
    public var networkName: String {
        switch self {
        case .jquery: return "jquery"
        case .math: return "mathjax"
        }
    }

    /// The libraries a page's HTML relies on: jQuery for pages with scripts, math for pages with TeX.
    static func needed(by html: [UInt8], scripted: Bool) -> Set<RuntimeLibrary> {
        var needed = Set<RuntimeLibrary>()
        if scripted && ByteSearch.containsCaseInsensitive(html, "<script") { needed.insert(.jquery) }
        if NetworkContent.usesMath(html) { needed.insert(.math) }
        return needed
    }
}

enum ByteSearch {
    /// ASCII case-insensitive search for an ASCII needle.
    static func containsCaseInsensitive(_ haystack: [UInt8], _ needle: String) -> Bool {
        firstCaseInsensitive(haystack, needle, from: 0) != nil
    }

    static func firstCaseInsensitive(_ haystack: [UInt8], _ needle: String, from start: Int) -> Int? {
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

    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= 65 && byte <= 90 ? byte + 32 : byte
    }
}
