/// Text put into HTML, escaped byte by byte. Swift compares `Character`s, and Foundation's
/// `replacingOccurrences` matches whole grapheme clusters: a quote followed by a combining mark
/// (`"\u{301}`) is neither, yet a browser reads the quote and leaves the attribute. Each byte
/// here is what the browser reads.
public enum HTMLEscape {
    /// `text` with each of `characters` (ASCII among `&<>"'`) written as its entity.
    public static func escape(_ text: String, _ characters: String = "&<>\"'") -> String {
        let special = Array(characters.utf8)
        guard text.utf8.contains(where: special.contains) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            guard special.contains(byte), let entity = entity(of: byte) else {
                out.append(byte)
                continue
            }
            out += entity.utf8
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func entity(of byte: UInt8) -> String? {
        switch byte {
        case UInt8(ascii: "&"): "&amp;"
        case UInt8(ascii: "<"): "&lt;"
        case UInt8(ascii: ">"): "&gt;"
        case UInt8(ascii: "\""): "&quot;"
        case UInt8(ascii: "'"): "&#39;"
        default: nil
        }
    }
}
