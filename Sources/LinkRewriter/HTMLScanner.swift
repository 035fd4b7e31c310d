/// A tolerant HTML tokenizer that finds every URL in a page without parsing it as a tree:
/// course HTML is often invalid, and bytes outside the URLs must stay exactly as written.
public enum HTMLScanner {
    /// Attributes whose whole value is one URL.
    public static let urlAttributes: Set<String> = [
        "src", "href", "poster", "data", "action", "background", "formaction", "cite", "longdesc",
        "xlink:href", "manifest", "icon", "codebase", "archive", "lowsrc", "dynsrc", "profile",
    ]

    public static func references(in bytes: [UInt8]) -> [Reference] {
        var found: [Reference] = []
        var i = 0
        let n = bytes.count
        while i < n {
            guard bytes[i] == UInt8(ascii: "<"), i + 1 < n else {
                i += 1
                continue
            }
            if bytes.matches("<!--", at: i) {
                i = (bytes.find("-->", from: i + 4).map { $0 + 3 }) ?? n
                continue
            }
            let next = bytes[i + 1]
            guard next.isASCIILetter || next == UInt8(ascii: "/") else {
                i += 1
                continue
            }
            let tag = scanTag(bytes, from: i)
            if !tag.closing {
                for (attribute, value) in tag.attributes {
                    found += attributeReferences(bytes, attribute: attribute, value: value, element: tag.name)
                }
            }
            i = tag.end
            if !tag.closing, tag.name == "style" || tag.name == "script" {
                let close = bytes.findCaseInsensitive("</\(tag.name)", from: i) ?? n
                if tag.name == "style" {
                    found += CSSScanner.references(in: bytes, range: i..<close)
                } else {
                    found += EmbeddedScanner.references(in: bytes, range: i..<close)
                }
                i = close
            }
        }
        return found
    }

    struct Tag {
        var name: String
        var closing: Bool
        var end: Int
        var attributes: [(name: String, value: Range<Int>)] = []
    }

    static func scanTag(_ bytes: [UInt8], from start: Int) -> Tag {
        let n = bytes.count
        var i = start + 1
        let closing = bytes[i] == UInt8(ascii: "/")
        if closing { i += 1 }
        let nameStart = i
        while i < n, !bytes[i].isHTMLSpace, bytes[i] != UInt8(ascii: ">"), bytes[i] != UInt8(ascii: "/") { i += 1 }
        let name = String(decoding: bytes[nameStart..<i], as: UTF8.self).lowercased()
        var attributes: [(name: String, value: Range<Int>)] = []
        while i < n {
            while i < n, bytes[i].isHTMLSpace || bytes[i] == UInt8(ascii: "/") { i += 1 }
            guard i < n else { break }
            if bytes[i] == UInt8(ascii: ">") { return Tag(name: name, closing: closing, end: i + 1, attributes: attributes) }
            let attributeStart = i
            while i < n, !bytes[i].isHTMLSpace, bytes[i] != UInt8(ascii: ">"), bytes[i] != UInt8(ascii: "="),
                bytes[i] != UInt8(ascii: "/") || i == attributeStart
            { i += 1 }
            let attribute = String(decoding: bytes[attributeStart..<i], as: UTF8.self).lowercased()
            var j = i
            while j < n, bytes[j].isHTMLSpace { j += 1 }
            guard j < n, bytes[j] == UInt8(ascii: "=") else { continue }
            j += 1
            while j < n, bytes[j].isHTMLSpace { j += 1 }
            guard j < n else { i = j; break }
            let value: Range<Int>
            if bytes[j] == UInt8(ascii: "\"") || bytes[j] == UInt8(ascii: "'") {
                let quote = bytes[j]
                var end = j + 1
                while end < n, bytes[end] != quote { end += 1 }
                value = (j + 1)..<end
                i = min(end + 1, n)
            } else {
                var end = j
                while end < n, !bytes[end].isHTMLSpace, bytes[end] != UInt8(ascii: ">") { end += 1 }
                value = j..<end
                i = end
            }
            attributes.append((attribute, value))
        }
        return Tag(name: name, closing: closing, end: n, attributes: attributes)
    }

    static func attributeReferences(_ bytes: [UInt8], attribute: String, value: Range<Int>, element: String = "") -> [Reference] {
        if urlAttributes.contains(attribute) {
            let trimmed = bytes.trimmed(value)
            guard !trimmed.isEmpty else { return [] }
            return [Reference(range: trimmed, url: CharacterReferences.decode(bytes[trimmed]), context: .attribute(attribute), element: element)]
        }
        switch attribute {
        case "srcset", "imagesrcset": return srcsetReferences(bytes, value: value, attribute: attribute, element: element)
        case "style": return CSSScanner.references(in: bytes, range: value)
        default: return EmbeddedScanner.references(in: bytes, range: value)
        }
    }

    /// Every candidate of `srcset="a.png 1x, b.png 2x"`.
    static func srcsetReferences(_ bytes: [UInt8], value: Range<Int>, attribute: String, element: String) -> [Reference] {
        var found: [Reference] = []
        var i = value.lowerBound
        while i < value.upperBound {
            while i < value.upperBound, bytes[i].isHTMLSpace || bytes[i] == UInt8(ascii: ",") { i += 1 }
            let start = i
            while i < value.upperBound, !bytes[i].isHTMLSpace { i += 1 }
            var end = i
            // A URL directly followed by "," has no descriptor; the comma is not part of it.
            while end > start, bytes[end - 1] == UInt8(ascii: ",") { end -= 1 }
            if end > start {
                found.append(Reference(range: start..<end, url: CharacterReferences.decode(bytes[start..<end]), context: .attribute(attribute), element: element))
            }
            if end < i { continue }
            while i < value.upperBound, bytes[i] != UInt8(ascii: ",") { i += 1 }
        }
        return found
    }
}

/// An element found in a page, with its whole extent (start tag to end tag).
public struct FoundElement: Sendable, Equatable {
    public let range: Range<Int>
    /// Attribute values with character references decoded.
    public let attributes: [String: String]
}

extension HTMLScanner {
    /// Every `<name …>…</name>` (or lone start tag) in the page, outside comments.
    public static func elements(named name: String, in bytes: [UInt8]) -> [FoundElement] {
        var found: [FoundElement] = []
        var i = 0
        // Where the next end tag is (nil: none is left), so many unclosed elements stay linear.
        var nextClose: (from: Int, at: Int?)?
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<"), i + 1 < bytes.count else {
                i += 1
                continue
            }
            if bytes.matches("<!--", at: i) {
                i = (bytes.find("-->", from: i + 4).map { $0 + 3 }) ?? bytes.count
                continue
            }
            guard bytes[i + 1].isASCIILetter else {
                i += 1
                continue
            }
            let tag = scanTag(bytes, from: i)
            if tag.name == name {
                if let cached = nextClose, cached.from <= tag.end, cached.at.map({ $0 >= tag.end }) ?? true {
                    // The end tag found before is still the first one after this start tag.
                } else {
                    nextClose = (tag.end, bytes.findCaseInsensitive("</\(name)", from: tag.end))
                }
                let end = nextClose?.at.flatMap { close in
                    bytes[close...].firstIndex(of: UInt8(ascii: ">")).map { $0 + 1 }
                } ?? tag.end
                var attributes: [String: String] = [:]
                for (attribute, value) in tag.attributes where attributes[attribute] == nil {
                    attributes[attribute] = CharacterReferences.decode(bytes[value])
                }
                found.append(FoundElement(range: i..<end, attributes: attributes))
                i = end
            } else {
                i = tag.end
            }
        }
        return found
    }
}
