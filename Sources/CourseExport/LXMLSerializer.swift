/// The bytes the LMS's XML import hashes to name a block that has no name: each child element
/// of a container as lxml's `etree.tostring` writes it after parsing the file with
/// `remove_blank_text`. Written from lxml's and libxml2's observable behaviour:
/// - whitespace-only text between markup is dropped unless the element already holds text
///   (libxml2's "blank" heuristic), or the whitespace is the element's only content;
/// - CDATA becomes escaped text, comments and processing instructions stay;
/// - attribute values have literal tabs and line breaks turned into spaces, namespace
///   declarations come first, values are written in double quotes;
/// - the element's tail (text after its end tag) is part of it;
/// - `ascii` output writes every non-ASCII character as a decimal character reference, as
///   `etree.tostring(child)` does; `unicode` (`encoding='unicode'`) writes it as UTF-8.
/// A prefix declared on an ancestor is not re-declared: OLX does not use namespaces.
public enum LXMLSerializer {
    public enum Output: Sendable { case unicode, ascii }

    /// One serialization per child element of `element` (in `childElements` order).
    public static func childElements(of element: XMLElement, in source: [UInt8], output: Output) -> [[UInt8]] {
        var reader = LXMLReader(bytes: source, position: element.offset)
        guard let tree = reader.element() else { return [] }
        return tree.children.compactMap { child in
            guard case .element(let inner) = child.node else { return nil }
            var out = Writer(output: output)
            out.write(inner)
            out.text(child.tail ?? "")
            return out.bytes
        }
    }

    struct Writer {
        let output: Output
        var bytes: [UInt8] = []

        mutating func write(_ element: LXMLReader.Element) {
            raw("<" + element.name)
            let declarations = element.attributes.filter { $0.name == "xmlns" || $0.name.hasPrefix("xmlns:") }
            let others = element.attributes.filter { !($0.name == "xmlns" || $0.name.hasPrefix("xmlns:")) }
            for attribute in declarations + others {
                raw(" " + attribute.name + "=\"")
                escaped(attribute.value, inAttribute: true)
                raw("\"")
            }
            guard element.text != nil || !element.children.isEmpty else { return raw("/>") }
            raw(">")
            text(element.text ?? "")
            for child in element.children {
                switch child.node {
                case .element(let inner): write(inner)
                case .comment(let body): raw("<!--" + body + "-->")
                case .instruction(let target, let data): raw("<?" + target + (data.isEmpty ? "" : " " + data) + "?>")
                }
                text(child.tail ?? "")
            }
            raw("</" + element.name + ">")
        }

        mutating func text(_ value: String) { escaped(value, inAttribute: false) }

        mutating func raw(_ value: String) { bytes.append(contentsOf: value.utf8) }

        mutating func escaped(_ value: String, inAttribute: Bool) {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "&": raw("&amp;")
                case "<": raw("&lt;")
                case ">": raw("&gt;")
                case "\r": raw("&#13;")
                case "\"" where inAttribute: raw("&quot;")
                case "\n" where inAttribute: raw("&#10;")
                case "\t" where inAttribute: raw("&#9;")
                default:
                    if output == .ascii && scalar.value > 0x7F {
                        raw("&#\(scalar.value);")
                    } else {
                        bytes.append(contentsOf: String(scalar).utf8)
                    }
                }
            }
        }
    }
}

/// Reads one element of an already well-formed OLX file into lxml's model (text, and a tail
/// per child), applying `remove_blank_text` as libxml2 does.
struct LXMLReader {
    struct Attribute {
        let name: String
        let value: String
    }

    enum Node {
        case element(Element)
        case comment(String)
        case instruction(target: String, data: String)
    }

    struct Child {
        var node: Node
        var tail: String?
    }

    struct Element {
        var name: String
        var attributes: [Attribute] = []
        /// Nil when the element has no text node before its first child.
        var text: String?
        var children: [Child] = []
        /// Set once literal text (not a reference, not CDATA) was kept in it: libxml2 then
        /// keeps all of the element's later whitespace.
        var mixed = false
        /// Inside `xml:space="preserve"`: every whitespace is kept.
        var preserve = false

        /// libxml2's test: is the node that would precede new text a text node?
        var lastIsText: Bool { children.isEmpty ? text != nil : children[children.count - 1].tail != nil }
        var hasNoNodes: Bool { text == nil && children.isEmpty }

        mutating func append(text value: String) {
            if children.isEmpty {
                text = (text ?? "") + value
            } else {
                children[children.count - 1].tail = (children[children.count - 1].tail ?? "") + value
            }
        }
    }

    let bytes: [UInt8]
    var position: Int

    init(bytes: [UInt8], position: Int) {
        self.bytes = bytes
        self.position = position
    }

    func starts(_ literal: String) -> Bool {
        let needle = Array(literal.utf8)
        return position + needle.count <= bytes.count && bytes[position..<(position + needle.count)].elementsEqual(needle)
    }

    mutating func skip(past literal: String) -> Range<Int> {
        let start = position
        while position < bytes.count && !starts(literal) { position += 1 }
        let end = position
        position = min(bytes.count, position + literal.utf8.count)
        return start..<end
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    mutating func name() -> String {
        let start = position
        while position < bytes.count, !Self.isSpace(bytes[position]), !"/>=".utf8.contains(bytes[position]) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    mutating func skipSpace() { while position < bytes.count && Self.isSpace(bytes[position]) { position += 1 } }

    /// The element whose start tag begins at `position`, with everything inside it.
    mutating func element(preserving: Bool = false) -> Element? {
        guard starts("<") else { return nil }
        position += 1
        var element = Element(name: name())
        let open = startTagAttributes(into: &element)
        let space = element.attributes.first { $0.name == "xml:space" }?.value
        element.preserve = space == "preserve" || (space != "default" && preserving)
        guard open else { return element }
        while position < bytes.count {
            if starts("</") {
                _ = skip(past: ">")
                return element
            }
            content(into: &element)
        }
        return element
    }

    /// Reads the attributes; false when the tag closes itself.
    mutating func startTagAttributes(into element: inout Element) -> Bool {
        while position < bytes.count {
            skipSpace()
            if starts("/>") {
                position += 2
                return false
            }
            if starts(">") {
                position += 1
                return true
            }
            let attributeName = name()
            skipSpace()
            position += 1  // =
            skipSpace()
            let quote = bytes[min(position, bytes.count - 1)]
            position += 1
            let start = position
            while position < bytes.count && bytes[position] != quote { position += 1 }
            element.attributes.append(Attribute(name: attributeName, value: Self.attributeValue(bytes[start..<position])))
            position += 1
        }
        return false
    }

    /// One piece of content: a child, a comment, an instruction, CDATA or a run of text.
    mutating func content(into element: inout Element) {
        if starts("<!--") {
            position += 4
            let body = skip(past: "-->")
            element.children.append(Child(node: .comment(Self.lines(bytes[body]))))
        } else if starts("<![CDATA[") {
            position += 9
            element.append(text: Self.lines(bytes[skip(past: "]]>")]))
        } else if starts("<?") {
            position += 2
            let target = name()
            skipSpace()
            let data = Self.lines(bytes[skip(past: "?>")])
            element.children.append(Child(node: .instruction(target: target, data: data)))
        } else if starts("<") {
            if let child = self.element(preserving: element.preserve) { element.children.append(Child(node: .element(child))) }
        } else {
            let start = position
            while position < bytes.count && bytes[position] != UInt8(ascii: "<") { position += 1 }
            let run = bytes[start..<position]
            guard element.preserve || element.mixed || !isBlank(run, in: element) else { return }
            element.append(text: Entities.decode(ArraySlice(Self.lines(run).utf8)))
            element.mixed = element.mixed || Self.hasLiteralText(run)
        }
    }

    /// libxml2's `areBlanks` without a DTD: whitespace before markup is dropped unless it is
    /// the whole content of the element or the element already holds text.
    func isBlank(_ run: ArraySlice<UInt8>, in element: Element) -> Bool {
        guard run.allSatisfy(Self.isSpace) else { return false }
        if element.hasNoNodes && starts("</") { return false }
        return !element.lastIsText && element.text == nil
    }

    /// Whether the run holds a character written as itself, not as a reference.
    static func hasLiteralText(_ run: ArraySlice<UInt8>) -> Bool {
        var index = run.startIndex
        while index < run.endIndex {
            guard run[index] == UInt8(ascii: "&"), let end = run[index...].firstIndex(of: UInt8(ascii: ";")) else { return true }
            index = end + 1
        }
        return false
    }

    /// XML's line-end handling: CR LF and a lone CR read as LF.
    static func lines(_ slice: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(slice.count)
        var previousCR = false
        for byte in slice {
            if byte == 0x0A && previousCR { previousCR = false; continue }
            previousCR = byte == 0x0D
            out.append(byte == 0x0D ? 0x0A : byte)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Attribute-value normalization: literal tabs and line ends become spaces (a reference
    /// such as `&#10;` stays a line end).
    static func attributeValue(_ slice: ArraySlice<UInt8>) -> String {
        let spaced = lines(slice).utf8.map { $0 == 0x0A || $0 == 0x09 ? UInt8(ascii: " ") : $0 }
        return Entities.decode(ArraySlice(spaced))
    }
}
