import LinkRewriter
import SafeText

/// A reference to another site. A protocol-relative URL (`//host/x`) means the LMS's scheme
/// online but `file://host/x` in a downloaded page, so it is written out as `https://host/x`.
struct ExternalResource {
    /// The URL a browser would fetch (`https:` added to a protocol-relative one).
    let url: String
    let resolution: LinkRewriter.Resolution

    static func of(_ reference: Reference) -> ExternalResource? {
        if case .embedded = reference.context { return nil }
        let url = reference.url.trimmingASCIISpace()
        let lower = url.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            return ExternalResource(url: url, resolution: .keep)
        }
        guard url.hasPrefix("//"), url.count > 2 else { return nil }
        let absolute = "https:" + url
        return ExternalResource(url: absolute, resolution: .replace(reference.written(absolute)))
    }

    /// `https://host` of every absolute URL written in a script, the sites a framed tool talks to
    /// (analytics, update checks) that no attribute names. XML namespaces are names, not fetches.
    static func origins(inScript bytes: [UInt8]) -> [String] {
        var found: [String] = []
        var seen = Set<String>()
        let http = Array("http".utf8)
        var i = 0
        let n = bytes.count
        // Byte scan: Foundation's string search on a large minified script is many times slower.
        while i + 8 <= n {
            guard bytes[i] == http[0], bytes[i + 1] == http[1], bytes[i + 2] == http[2], bytes[i + 3] == http[3] else {
                i += 1
                continue
            }
            var j = i + 4
            let secure = bytes[j] == UInt8(ascii: "s")
            if secure { j += 1 }
            guard j + 3 <= n, bytes[j] == UInt8(ascii: ":"), bytes[j + 1] == UInt8(ascii: "/"), bytes[j + 2] == UInt8(ascii: "/") else {
                i += 4
                continue
            }
            j += 3
            let hostStart = j
            while j < n, Self.isHostByte(bytes[j]) { j += 1 }
            i = j
            let name = String(decoding: bytes[hostStart..<j], as: UTF8.self).lowercased()
            guard name.contains("."), !namespaceHosts.contains(where: { name == $0 || name.hasSuffix("." + $0) }) else { continue }
            let origin = (secure ? "https://" : "http://") + name
            if seen.insert(origin).inserted { found.append(origin) }
        }
        return found
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":")
    }

    /// A script written for the LMS page itself: it parses the course id out of the LMS's URL
    /// (`…/courses/course-v1:…/courseware/…`) or hooks the LMS's event `Logger`.
    static func needsLMSPage(script bytes: [UInt8]) -> Bool {
        func has(_ needle: String) -> Bool { bytes.firstRange(of: Array(needle.utf8)) != nil }
        return has("Logger.listen(") || (has("window.location") && has("courses/course"))
    }

    static let namespaceHosts = ["w3.org", "purl.org", "ns.adobe.com", "xmlns.com", "schemas.microsoft.com", "schemas.openxmlformats.org"]
}

extension Reference {
    /// `text` as it must be written where this reference stands: URLs come back decoded from the
    /// scanner, and inside an HTML attribute `&` and `"` are escaped again.
    func written(_ text: String) -> String {
        guard case .attribute = context else { return text }
        return HTMLEscape.escape(text, "&\"")
    }
}
