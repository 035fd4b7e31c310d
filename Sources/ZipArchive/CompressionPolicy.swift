/// Which entries are worth deflating: media formats are already compressed, so deflating them
/// costs time and saves nothing.
public enum CompressionPolicy {
    public static let storedExtensions: Set<String> = [
        "png", "jpg", "jpeg", "gif", "webp", "avif", "heic", "ico",
        "mp4", "m4v", "mov", "webm", "mkv", "avi", "ogv",
        "mp3", "m4a", "aac", "ogg", "oga", "opus", "flac", "wav",
        "pdf", "woff", "woff2", "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar",
        "docx", "xlsx", "pptx", "epub", "jar", "apk",
    ]

    /// True when the name's extension marks data that deflate cannot shrink.
    public static func isPrecompressed(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), !name[dot...].contains("/") else { return false }
        return storedExtensions.contains(name[name.index(after: dot)...].lowercased())
    }
}
