/// What a URL points at, in the terms of an Open edX course.
public enum LinkTarget: Sendable, Equatable {
    /// A course file: `/static/NAME`, `static/NAME`, `/asset-v1:…+type@asset+block@NAME`,
    /// `/c4x/ORG/NUM/asset/NAME`. `name` is percent-decoded; `suffix` is `?query#fragment` as written.
    case asset(name: String, suffix: String)
    /// `/jump_to_id/ID` or `/jump_to/USAGE_ID`: another block of the course.
    case block(id: String, suffix: String)
    /// Another path on the LMS (`/courses/…`, `/u/…`).
    case lmsPath(String)
    /// A relative URL such as `notes.html` (`path` percent-decoded): relative to an LMS page,
    /// so it means nothing offline unless it names a course file.
    case relative(path: String, suffix: String)
    /// External URLs, `data:`, `mailto:`, anchors: left exactly as they are.
    case untouched

    public static func classify(_ url: String) -> LinkTarget {
        let trimmed = url.trimmingASCIISpace()
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#"), !trimmed.hasPrefix("//") else { return .untouched }
        if let colon = trimmed.firstIndex(of: ":"), let slash = trimmed.firstIndex(of: "/") ?? Optional(trimmed.endIndex),
            colon < slash, !trimmed.hasPrefix("/")
        {
            return .untouched  // has a scheme: http:, data:, mailto:, javascript:
        }
        let split = trimmed.firstIndex { $0 == "?" || $0 == "#" } ?? trimmed.endIndex
        let path = String(trimmed[..<split])
        let suffix = String(trimmed[split...])
        for prefix in ["/static/", "static/"] where path.hasPrefix(prefix) {
            let name = PercentEncoding.decode(String(path.dropFirst(prefix.count)))
            return name.isEmpty ? .untouched : .asset(name: name, suffix: suffix)
        }
        if path.hasPrefix("/asset-v1:"), let marker = path.firstRange(of: "type@asset+block@") {
            return .asset(name: PercentEncoding.decode(String(path[marker.upperBound...])), suffix: suffix)
        }
        if path.hasPrefix("/c4x/") {
            // "", "c4x", ORG, NUM, "asset", NAME (which may itself contain "/")
            let parts = path.split(separator: "/", maxSplits: 5, omittingEmptySubsequences: false)
            if parts.count == 6, parts[4] == "asset", !parts[5].isEmpty {
                return .asset(name: PercentEncoding.decode(String(parts[5])), suffix: suffix)
            }
        }
        for prefix in ["/jump_to_id/", "/jump_to/"] where path.hasPrefix(prefix) {
            let id = PercentEncoding.decode(String(path.dropFirst(prefix.count)))
            let trimmedID = id.hasSuffix("/") ? String(id.dropLast()) : id
            return trimmedID.isEmpty ? .lmsPath(path) : .block(id: trimmedID, suffix: suffix)
        }
        if path.hasPrefix("/") { return .lmsPath(trimmed) }
        return path.isEmpty ? .untouched : .relative(path: PercentEncoding.decode(path), suffix: suffix)
    }
}

extension String {
    public func trimmingASCIISpace() -> String {
        let scalars = unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(scalars[first...last])
    }
}

/// Percent-encoding as URLs in bundles need it.
public enum PercentEncoding {
    /// Decodes `%XX` sequences; malformed ones stay as written.
    public static func decode(_ text: String) -> String {
        guard text.contains("%") else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let high = hex(bytes[i + 1]), let low = hex(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes a relative path for use in a link: unreserved characters and `/` stay, the rest
    /// (spaces, non-ASCII, `#`, `?`, `%`) becomes `%XX`.
    public static func encodePath(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                out += "%"
                out.unicodeScalars.append(digits[Int(byte >> 4)])
                out.unicodeScalars.append(digits[Int(byte & 0xF)])
            }
        }
        return out
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
