import LinkRewriter

/// Relative links between files inside one bundle.
enum RelativePath {
    /// `path` relative to `folder` (both under static/), percent-encoded for use in a link.
    static func link(to path: String, from folder: String) -> String {
        let from = folder.split(separator: "/")
        let to = path.split(separator: "/")
        var common = 0
        while common < from.count, common < to.count - 1, from[common] == to[common] { common += 1 }
        let ups = Array(repeating: "..", count: from.count - common)
        return PercentEncoding.encodePath((ups + to[common...].map(String.init)).joined(separator: "/"))
    }

    /// Joins a relative reference onto `folder`; nil when it climbs out of static/ or is absolute.
    static func resolve(_ reference: String, from folder: String) -> String? {
        guard !reference.isEmpty, !reference.hasPrefix("/") else { return nil }
        var parts = folder.split(separator: "/").map(String.init)
        for part in reference.split(separator: "/") {
            switch part {
            case ".": continue
            case "..":
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            default: parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }
}
