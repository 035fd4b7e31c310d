import Foundation

/// Which file of the target a request path names, decided on the file's real location:
/// symbolic links are resolved first, so a link inside a course folder that points at the
/// target's state (`.coursepack-sync`: the outbox, locks, target.json, search.sqlite) or out of
/// the target is refused like the direct path. Hard links are out of reach: sync writes regular
/// files only (archive entries carry no links), and making one needs write access to the
/// course folder on the same file system, which already gives the state itself.
struct TargetFiles: Sendable {
    /// The target's real path (no links, no trailing slash).
    let root: String

    enum Resolved: Equatable {
        /// A regular file: its real path, and the path relative to `root` it is served as.
        case file(real: String, relative: String)
        /// A folder asked for without its trailing slash: redirect, so relative links work.
        case folderWithoutSlash
        case refused
        case missing
    }

    func resolve(_ requestPath: String) -> Resolved {
        guard let decoded = requestPath.removingPercentEncoding, Self.isSafe(requestPath: requestPath, decoded: decoded) else { return .refused }
        guard let real = CourseServer.realPath(root + decoded) else { return .missing }
        guard let relative = relativeIfServable(real) else { return .refused }
        var info = stat()
        guard stat(real, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            return .file(real: real, relative: relative)
        case S_IFDIR:
            guard decoded.hasSuffix("/") else { return .folderWithoutSlash }
            // index.html may itself be a link: resolved and checked like any path.
            guard let index = CourseServer.realPath(real + "/index.html") else { return .missing }
            guard let indexRelative = relativeIfServable(index) else { return .refused }
            guard stat(index, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return .missing }
            return .file(real: index, relative: indexRelative)
        default:
            // A FIFO would hang the request, a device could be read without end.
            return .refused
        }
    }

    /// `real` relative to the root ("" for the root itself) when it is inside the root and no
    /// component of it is hidden; nil otherwise.
    func relativeIfServable(_ real: String) -> String? {
        guard real == root || real.hasPrefix(root + "/") else { return nil }
        let relative = String(real.dropFirst(root.count))
        let hidden = relative.split(separator: "/").contains { $0.hasPrefix(".") }
        return hidden ? nil : relative
    }

    /// Refuses before any lookup what could only be an attack: `..` or `.` and hidden names,
    /// backslashes, NUL and control characters, and percent-encoding that still encodes a dot,
    /// slash, backslash or percent sign once decoded (double encoding).
    static func isSafe(requestPath: String, decoded: String) -> Bool {
        guard decoded.hasPrefix("/"), !decoded.contains("\\") else { return false }
        guard !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else { return false }
        let lower = decoded.lowercased()
        for encoded in ["%2e", "%2f", "%5c", "%00", "%25"] where lower.contains(encoded) { return false }
        return decoded.split(separator: "/", omittingEmptySubsequences: true).allSatisfy { !$0.hasPrefix(".") }
    }

    /// The path FileMiddleware is handed: the real one, so a link swapped in after this check
    /// is not followed.
    static func encoded(_ relative: String) -> String {
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "%;"))
        return (relative.isEmpty ? "/" : relative).addingPercentEncoding(withAllowedCharacters: allowed) ?? "/"
    }
}
