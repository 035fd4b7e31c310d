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

extension CompressionPolicy {
    /// True when the first bytes of a content mark a compressed format (images, audio, video,
    /// fonts, archives, PDF): decided by the bytes alone, so one content is encoded one way
    /// whatever name it is bundled under. Bytes this does not recognise are deflated, and
    /// stored when that does not make them smaller.
    public static func looksCompressed(_ head: some Collection<UInt8>) -> Bool {
        let b = Array(head.prefix(12))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && Array(b[offset..<offset + magic.count]) == magic
        }
        let magics: [[UInt8]] = [
            [0x89, 0x50, 0x4E, 0x47], [0xFF, 0xD8, 0xFF], Array("GIF8".utf8), Array("%PDF".utf8), [0x50, 0x4B, 0x03, 0x04],
            [0x1F, 0x8B], Array("BZh".utf8), [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], [0x28, 0xB5, 0x2F, 0xFD],
            [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], Array("Rar!".utf8), [0x1A, 0x45, 0xDF, 0xA3], Array("OggS".utf8),
            Array("fLaC".utf8), Array("ID3".utf8), Array("wOFF".utf8), Array("wOF2".utf8),
        ]
        if magics.contains(where: { starts($0) }) { return true }
        // ISO media (mp4, mov, m4a, heic, avif), WebP and AVI, MPEG audio frames (mp3, aac).
        if starts(Array("ftyp".utf8), at: 4) { return true }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) || starts(Array("AVI ".utf8), at: 8) { return true }
        return b.count >= 2 && b[0] == 0xFF && b[1] & 0xE0 == 0xE0
    }
}
