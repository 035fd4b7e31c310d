/// Splits HTML into text and tags the way a browser's tokenizer finds tags: `<` and a letter
/// (or `</` and a letter) starts one, attribute values may be quoted with `"` or `'` and hold
/// `>`, comments and `<!…>`/`<?…>` are skipped. Any other `<` is text, written as `&lt;`.
struct HTMLScanner {
    struct Tag {
        var name: String
        var closing = false
        var selfClosing = false
        /// In order; a name without `=` has no value.
        var attributes: [(String, String?)] = []
    }

    enum Token {
        case text([UInt8])
        case tag(Tag)
    }

    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    func at(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

    mutating func next() -> Token? {
        guard index < bytes.count else { return nil }
        guard bytes[index] == UInt8(ascii: "<") else {
            let start = index
            while index < bytes.count && bytes[index] != UInt8(ascii: "<") { index += 1 }
            return .text(Array(bytes[start..<index]))
        }
        if let second = at(1), Self.isLetter(second) { return .tag(tag(closing: false)) }
        if at(1) == UInt8(ascii: "/"), let third = at(2), Self.isLetter(third) { return .tag(tag(closing: true)) }
        if at(1) == UInt8(ascii: "!") || at(1) == UInt8(ascii: "?") || at(1) == UInt8(ascii: "/") {
            skipMarkupDeclaration()
            return .text([])
        }
        index += 1
        return .text(Array("&lt;".utf8))
    }

    /// A comment ends at `-->`, anything else of `<!`, `<?` or `</` + non-letter at the next `>`.
    mutating func skipMarkupDeclaration() {
        let comment = at(1) == UInt8(ascii: "!") && at(2) == UInt8(ascii: "-") && at(3) == UInt8(ascii: "-")
        index += comment ? 4 : 2
        while index < bytes.count {
            if comment ? (bytes[index] == UInt8(ascii: ">") && index >= 2 && bytes[index - 1] == UInt8(ascii: "-") && bytes[index - 2] == UInt8(ascii: "-"))
                : bytes[index] == UInt8(ascii: ">") {
                index += 1
                return
            }
            index += 1
        }
    }

    mutating func tag(closing: Bool) -> Tag {
        index += closing ? 2 : 1
        var tag = Tag(name: word(until: { Self.isSpace($0) || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ">") }).lowercased(), closing: closing)
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ">") {
                index += 1
                break
            }
            if Self.isSpace(byte) || byte == UInt8(ascii: "/") {
                tag.selfClosing = byte == UInt8(ascii: "/") && at(1) == UInt8(ascii: ">")
                index += 1
                continue
            }
            tag.attributes.append(attribute())
        }
        return tag
    }

    /// One `name[=value]`; a name keeps only the characters an attribute name is written with.
    mutating func attribute() -> (String, String?) {
        let raw = word(until: { Self.isSpace($0) || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "=") })
        let name = String(raw.lowercased().unicodeScalars.filter { $0.properties.isAlphabetic || "0123456789-_:.".unicodeScalars.contains($0) })
        var probe = index
        while probe < bytes.count && Self.isSpace(bytes[probe]) { probe += 1 }
        guard probe < bytes.count, bytes[probe] == UInt8(ascii: "=") else { return (name.isEmpty ? "_" : name, nil) }
        index = probe + 1
        while index < bytes.count && Self.isSpace(bytes[index]) { index += 1 }
        guard let quote = at(0), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            return (name.isEmpty ? "_" : name, word(until: { Self.isSpace($0) || $0 == UInt8(ascii: ">") }))
        }
        index += 1
        let value = word(until: { $0 == quote })
        index += 1
        return (name.isEmpty ? "_" : name, value)
    }

    /// Bytes up to (not including) the first that `stop` accepts, or to the end.
    mutating func word(until stop: (UInt8) -> Bool) -> String {
        let start = index
        while index < bytes.count && !stop(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Moves past `</name …>` (case-insensitive), or to the end when it never comes.
    mutating func skip(pastClosing name: String) {
        let target = Array("</\(name)".utf8)
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "<"), index + target.count <= bytes.count,
                zip(bytes[index..<index + target.count], target).allSatisfy({ ($0 | 0x20) == ($1 | 0x20) }) {
                _ = tag(closing: true)
                return
            }
            index += 1
        }
    }
}
