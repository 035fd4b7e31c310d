import Foundation

/// The permission bits `open` gives a file it creates: the mode asked for, less the process's
/// umask. A file made some other way (a download renamed into place) is set to the same, so
/// that an account that keeps its files private keeps this one private too.
public enum CreatedFileMode {
    public static func of(_ requested: mode_t) -> mode_t { requested & ~umask }

    /// Read from `/proc/self/status` rather than by calling `umask(2)`, which only reads the
    /// mask by setting it: another thread creating a file meanwhile would get the wrong bits.
    /// Where it cannot be read, the most private mask: a file too private is safe, one too
    /// open is not.
    static let umask: mode_t = {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        else { return 0o077 }
        return mask & 0o777
    }()
}
