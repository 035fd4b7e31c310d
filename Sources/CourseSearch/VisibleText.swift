import LinkRewriter

/// The text a reader sees in an HTML fragment: markup, comments, and the content of elements
/// that show no text (`script`, `style`, `template`, `head`) or only controls (`button`,
/// `select`) left out, character references decoded, whitespace collapsed. A tolerant scanner,
/// not a parser: course HTML is often not well formed, and a stray `<` is text.
public enum VisibleText {
    static let hiddenElements: Set<String> = ["script", "style", "template", "head", "title", "noscript", "button", "select", "textarea", "svg", "math"]
    /// Elements inside a word: no separator where they start or end (`<b>W</b>ord` is one word).
    static let inlineElements: Set<String> = [
        "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "i", "ins", "kbd", "mark", "q", "s",
        "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "font",
    ]

    public static func of(html: String) -> String {
        let bytes = Array(html.utf8)
        var text: [UInt8] = []
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<"), index + 1 < count else {
                text.append(byte)
                index += 1
                continue
            }
            let next = bytes[index + 1]
            if bytes[index...].starts(with: Array("<!--".utf8)) {
                index = find(Array("-->".utf8), in: bytes, from: index + 4).map { $0 + 3 } ?? count
                text.append(0x20)
                continue
            }
            let isTag = isLetter(next) || next == UInt8(ascii: "/") || next == UInt8(ascii: "!") || next == UInt8(ascii: "?")
            guard isTag else {
                text.append(byte)
                index += 1
                continue
            }
            let closing = next == UInt8(ascii: "/")
            var nameEnd = index + (closing ? 2 : 1)
            let nameStart = nameEnd
            while nameEnd < count, isLetter(bytes[nameEnd]) || isDigit(bytes[nameEnd]) || bytes[nameEnd] == UInt8(ascii: "-") { nameEnd += 1 }
            let name = String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self).lowercased()
            let tagEnd = endOfTag(bytes, from: nameEnd)
            index = tagEnd
            if !inlineElements.contains(name) { text.append(0x20) }
            if !closing, hiddenElements.contains(name), !(tagEnd >= 2 && bytes[tagEnd - 2] == UInt8(ascii: "/")) {
                // Skipped up to the matching end tag (nested ones of the same name counted).
                index = endOfElement(name, in: bytes, from: tagEnd)
            }
        }
        let decoded = text.contains(UInt8(ascii: "&")) ? CharacterReferences.decode(text[...]) : String(decoding: text, as: UTF8.self)
        return collapsingWhitespace(decoded)
    }

    /// Runs of whitespace (Unicode White_Space and no-break space) as one space, none at
    /// either end. Read as UTF-8: ASCII, most of any course's text, is classified by its byte;
    /// only other scalars are looked up, which made this a fifth of a full build's time when
    /// every scalar was.
    public static func collapsingWhitespace(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var pendingSpace = false
            var index = 0
            while index < bytes.count {
                let lead = bytes[index]
                let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
                let isSpace: Bool
                if length == 1 {
                    isSpace = lead == 0x20 || (0x09...0x0D).contains(lead)
                } else {
                    // A String's UTF-8 is valid: the lead byte's length is there.
                    var value = UInt32(lead) & (0xFF >> (length + 1))
                    for offset in 1..<length { value = value << 6 | UInt32(bytes[index + offset] & 0x3F) }
                    isSpace = Unicode.Scalar(value).map { $0.properties.isWhitespace || $0 == "\u{00A0}" } ?? false
                }
                if isSpace {
                    pendingSpace = !out.isEmpty
                } else {
                    if pendingSpace { out.append(0x20) }
                    pendingSpace = false
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + length)]))
                }
                index += length
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard needle.count <= bytes.count, start <= bytes.count - needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// Just past the `>` that ends a tag whose name ends at `start`, quotes respected.
    static func endOfTag(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        var quote: UInt8?
        while index < bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index + 1
            }
            index += 1
        }
        return bytes.count
    }

    /// Just past `</name>` closing the element opened before `start`; the end when it is not closed.
    static func endOfElement(_ name: String, in bytes: [UInt8], from start: Int) -> Int {
        let open = Array("<\(name)".utf8)
        let close = Array("</\(name)".utf8)
        var depth = 1
        var index = start
        // Script and style content is raw text: only their end tag ends them.
        let raw = ["script", "style", "textarea", "title"].contains(name)
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else { index += 1; continue }
            if matches(close, bytes, at: index) {
                depth -= 1
                let end = endOfTag(bytes, from: index + close.count)
                if depth == 0 { return end }
                index = end
            } else if !raw, matches(open, bytes, at: index) {
                depth += 1
                index = endOfTag(bytes, from: index + open.count)
            } else {
                index += 1
            }
        }
        return bytes.count
    }

    /// `name` (case-insensitive) at `index`, followed by something that ends a tag name.
    static func matches(_ name: [UInt8], _ bytes: [UInt8], at index: Int) -> Bool {
        guard index + name.count <= bytes.count else { return false }
        for (offset, expected) in name.enumerated() {
            let byte = bytes[index + offset]
            let lower = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
            guard lower == expected else { return false }
        }
        let after = index + name.count < bytes.count ? bytes[index + name.count] : UInt8(ascii: ">")
        return !(isLetter(after) || isDigit(after) || after == UInt8(ascii: "-"))
    }
}
