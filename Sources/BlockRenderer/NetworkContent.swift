import LinkRewriter

/// Finds what an HTML block needs the network for, and turns embedded external pages (iframes:
/// YouTube, tools, maps) into visible links that open online, since they are blank offline.
enum NetworkContent {
    struct Result {
        var html: [UInt8]
        var requiresNetwork: [String]
    }

    static func process(_ html: [UInt8]) -> Result {
        var needs: [String] = []
        var replacements: [(Range<Int>, [UInt8])] = []
        for frame in HTMLScanner.elements(named: "iframe", in: html) {
            guard let src = frame.attributes["src"]?.trimmingWhitespace(), isExternal(src) else { continue }
            let url = src.hasPrefix("//") ? "https:" + src : src
            needs.append(url)
            let title = frame.attributes["title"].map { "“\($0)”" } ?? "this embedded content"
            let link = "<p class=\"coursepack-online-only\"><a href=\"\(HTMLText.escape(url))\" target=\"_blank\" rel=\"noopener\">Open \(HTMLText.escape(title)) online</a></p>"
            replacements.append((frame.range, Array(link.utf8)))
        }
        for script in HTMLScanner.elements(named: "script", in: html) {
            if let src = script.attributes["src"]?.trimmingWhitespace(), isExternal(src) { needs.append(src) }
        }

        var out: [UInt8] = []
        var position = 0
        for (range, bytes) in replacements.sorted(by: { $0.0.lowerBound < $1.0.lowerBound }) where range.lowerBound >= position {
            out += html[position..<range.lowerBound]
            out += bytes
            position = range.upperBound
        }
        out += html[position...]
        var seen = Set<String>()
        return Result(html: out, requiresNetwork: needs.filter { seen.insert($0).inserted })
    }

    static func isExternal(_ url: String) -> Bool {
        let lower = url.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("//")
    }

    /// TeX delimiters Open edX pages use for MathJax.
    static let mathMarkers = ["\\(", "\\[", "[mathjax", "math/tex", "$$"].map { Array($0.utf8) }

    static func usesMath(_ html: [UInt8]) -> Bool {
        mathMarkers.contains { contains(html, $0) }
    }

    /// Plain byte search; the generic `firstRange(of:)` allocates per position and was the
    /// slowest part of rendering a page.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return needle.isEmpty }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                var i = 0
                let last = hay.count - pin.count
                while i <= last {
                    if hay[i] == first {
                        var j = 1
                        while j < pin.count && hay[i + j] == pin[j] { j += 1 }
                        if j == pin.count { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }
}
