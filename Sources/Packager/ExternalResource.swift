import LinkRewriter

/// A reference to another site. A protocol-relative URL (`//host/x`) means the LMS's scheme
/// online but `file://host/x` in a downloaded page, so it is written out as `https://host/x`.
struct ExternalResource {
    /// The URL a browser would fetch (`https:` added to a protocol-relative one).
    let url: String
    let resolution: LinkRewriter.Resolution

    static func of(_ reference: Reference) -> ExternalResource? {
        if case .embedded = reference.context { return nil }
        let url = reference.url.trimmingASCIIWhitespace()
        let lower = url.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            return ExternalResource(url: url, resolution: .keep)
        }
        guard url.hasPrefix("//"), url.count > 2 else { return nil }
        let absolute = "https:" + url
        let written: String
        if case .attribute = reference.context {
            written = absolute.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
        } else {
            written = absolute
        }
        return ExternalResource(url: absolute, resolution: .replace(written))
    }

    /// `https://host` of every absolute URL written in a script, the sites a framed tool talks to
    /// (analytics, update checks) that no attribute names. XML namespaces are names, not fetches.
    static func origins(inScript bytes: [UInt8]) -> [String] {
        var found: [String] = []
        var seen = Set<String>()
        let text = String(decoding: bytes, as: UTF8.self)
        var rest = Substring(text)
        while let start = rest.range(of: "http") {
            let tail = rest[start.lowerBound...]
            let scheme: String
            if tail.hasPrefix("https://") { scheme = "https://" } else if tail.hasPrefix("http://") { scheme = "http://" } else {
                rest = rest[start.upperBound...]
                continue
            }
            let hostStart = tail.index(tail.startIndex, offsetBy: scheme.count)
            let host = tail[hostStart...].prefix { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" }
            rest = tail[hostStart...]
            let name = host.lowercased()
            guard name.contains("."), !namespaceHosts.contains(where: { name == $0 || name.hasSuffix("." + $0) }) else { continue }
            let origin = scheme + name
            if seen.insert(origin).inserted { found.append(origin) }
        }
        return found
    }

    /// A script written for the LMS page itself: it parses the course id out of the LMS's URL
    /// (`…/courses/course-v1:…/courseware/…`) or hooks the LMS's event `Logger`.
    static func needsLMSPage(script bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.contains("Logger.listen(") || (text.contains("window.location") && text.contains("courses/course"))
    }

    static let namespaceHosts = ["w3.org", "purl.org", "ns.adobe.com", "xmlns.com", "schemas.microsoft.com", "schemas.openxmlformats.org"]
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" || first == "\n" || first == "\r" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" || last == "\n" || last == "\r" { view.removeLast() }
        return String(view)
    }
}
