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

