/// An XML element as OLX needs it: name, attributes in source order, children, and where its
/// content sits in the source bytes (inline HTML is taken from there verbatim).
public struct XMLElement: Sendable, Equatable {
    public var name: String
    public var attributes: [XMLAttribute]
    public var children: [XMLNode]
    /// Byte range of everything between the start tag and the end tag (empty for `<a/>`).
    public var contentRange: Range<Int>
    /// Byte offset of the start tag, for line numbers in messages.
    public var offset: Int

    public func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    public var childElements: [XMLElement] {
        children.compactMap { if case .element(let e) = $0 { return e } else { return nil } }
    }

    /// The concatenated text of this element and its descendants.
    public var text: String {
        children.map {
            switch $0 {
            case .text(let t): return t
            case .element(let e): return e.text
            }
        }.joined()
    }
}

public struct XMLAttribute: Sendable, Equatable {
    public var name: String
    public var value: String
}

public enum XMLNode: Sendable, Equatable {
    case element(XMLElement)
    case text(String)
}

public struct XMLSyntaxError: Error, Equatable, CustomStringConvertible {
    public let line: Int
    public let reason: String
    public var description: String { "line \(line): \(reason)" }
}

/// A small, strict XML reader for OLX files. Not for HTML: course HTML is read by the tolerant
/// scanner in LinkRewriter. Iterative, so deep nesting cannot overflow the stack.
public enum XMLTree {
    public static let maximumDepth = 256

    public static func parse(_ bytes: [UInt8]) throws(XMLSyntaxError) -> XMLElement {
        var parser = Parser(bytes: bytes)
        return try parser.document()
    }
}

private struct Parser {
    let bytes: [UInt8]
    var i = 0
    var stack: [XMLElement] = []
    var root: XMLElement?

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
    }

    func line(at offset: Int) -> Int {
        var line = 1
        for b in bytes[..<min(offset, bytes.count)] where b == UInt8(ascii: "\n") { line += 1 }
        return line
    }

    func fail(_ reason: String, at offset: Int? = nil) -> XMLSyntaxError {
        XMLSyntaxError(line: line(at: offset ?? i), reason: reason)
    }

    func starts(_ literal: String, at position: Int) -> Bool {
        var p = position
        for b in literal.utf8 {
            guard p < bytes.count, bytes[p] == b else { return false }
            p += 1
        }
        return true
    }

    func find(_ literal: String, from position: Int) -> Int? {
        let needle = Array(literal.utf8)
        guard let first = needle.first else { return position }
        var p = position
        while p + needle.count <= bytes.count {
            if bytes[p] == first && starts(literal, at: p) { return p }
            p += 1
        }
        return nil
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
    static func isNameByte(_ b: UInt8) -> Bool {
        !isSpace(b) && b != UInt8(ascii: "/") && b != UInt8(ascii: ">") && b != UInt8(ascii: "=")
            && b != UInt8(ascii: "<") && b != UInt8(ascii: "\"") && b != UInt8(ascii: "'")
    }

    mutating func skipSpace() { while i < bytes.count && Self.isSpace(bytes[i]) { i += 1 } }

    mutating func name() throws(XMLSyntaxError) -> String {
        let start = i
        while i < bytes.count && Self.isNameByte(bytes[i]) { i += 1 }
        guard i > start else { throw fail("expected a name") }
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    mutating func document() throws(XMLSyntaxError) -> XMLElement {
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "<") {
                try markup()
            } else {
                let start = i
                while i < bytes.count && bytes[i] != UInt8(ascii: "<") { i += 1 }
                try appendText(start..<i)
            }
        }
        if let open = stack.last {
            throw fail("<\(open.name)> opened on line \(line(at: open.offset)) is never closed", at: bytes.count)
        }
        guard let root else { throw fail("no root element") }
        return root
    }

    mutating func appendText(_ range: Range<Int>) throws(XMLSyntaxError) {
        guard !stack.isEmpty else {
            if bytes[range].contains(where: { !Self.isSpace($0) }) {
                throw fail(root == nil ? "text before the root element" : "text after the root element", at: range.lowerBound)
            }
            return
        }
        stack[stack.count - 1].children.append(.text(Entities.decode(bytes[range])))
    }

    mutating func markup() throws(XMLSyntaxError) {
        let start = i
        if starts("<!--", at: i) {
            guard let end = find("-->", from: i + 4) else { throw fail("comment is never closed") }
            i = end + 3
        } else if starts("<![CDATA[", at: i) {
            guard let end = find("]]>", from: i + 9) else { throw fail("CDATA section is never closed") }
            guard !stack.isEmpty else { throw fail("CDATA outside the root element") }
            stack[stack.count - 1].children.append(.text(String(decoding: bytes[(i + 9)..<end], as: UTF8.self)))
            i = end + 3
        } else if starts("<?", at: i) {
            guard let end = find("?>", from: i + 2) else { throw fail("processing instruction is never closed") }
            i = end + 2
        } else if starts("<!", at: i) {
            try doctype()
        } else if starts("</", at: i) {
            i += 2
            let closing = try name()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else { throw fail("expected > after </\(closing)") }
            i += 1
            guard var element = stack.popLast() else { throw fail("</\(closing)> closes nothing", at: start) }
            guard element.name == closing else {
                throw fail("</\(closing)> does not close <\(element.name)> opened on line \(line(at: element.offset))", at: start)
            }
            element.contentRange = element.contentRange.lowerBound..<start
            finish(element)
        } else {
            try startTag()
        }
    }

    /// Skips `<!DOCTYPE …>` with its internal subset. Quoted literals (entity values, system
    /// ids), comments and processing instructions may hold `[`, `]` and `>` that are text.
    mutating func doctype() throws(XMLSyntaxError) {
        let start = i
        var depth = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                let quote = bytes[i]
                i += 1
                while i < bytes.count && bytes[i] != quote { i += 1 }
                guard i < bytes.count else { throw fail("a quoted value in the declaration is never closed", at: start) }
            case UInt8(ascii: "<") where depth > 0 && starts("<!--", at: i):
                guard let end = find("-->", from: i + 4) else { throw fail("comment is never closed") }
                i = end + 2
            case UInt8(ascii: "<") where depth > 0 && starts("<?", at: i):
                guard let end = find("?>", from: i + 2) else { throw fail("processing instruction is never closed") }
                i = end + 1
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ">") where depth <= 0:
                i += 1
                return
            default: break
            }
            i += 1
        }
        throw fail("declaration is never closed", at: start)
    }

    mutating func startTag() throws(XMLSyntaxError) {
        let start = i
        if stack.isEmpty && root != nil { throw fail("a second root element", at: start) }
        i += 1
        let tag = try name()
        var attributes: [XMLAttribute] = []
        // Names as bytes, as XML compares them (Swift's String equality would also match
        // canonically equivalent spellings); a set keeps thousands of attributes linear.
        var attributeNames = Set<ArraySlice<UInt8>>()
        while true {
            skipSpace()
            guard i < bytes.count else { throw fail("<\(tag)> tag is never closed", at: start) }
            if bytes[i] == UInt8(ascii: ">") {
                i += 1
                guard stack.count < XMLTree.maximumDepth else {
                    throw fail("elements nested deeper than \(XMLTree.maximumDepth) levels", at: start)
                }
                stack.append(XMLElement(name: tag, attributes: attributes, children: [], contentRange: i..<i, offset: start))
                return
            }
            if starts("/>", at: i) {
                i += 2
                finish(XMLElement(name: tag, attributes: attributes, children: [], contentRange: i..<i, offset: start))
                return
            }
            let nameStart = i
            let attributeName = try name()
            let nameBytes = bytes[nameStart..<i]
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else {
                throw fail("attribute \(attributeName) of <\(tag)> has no value")
            }
            i += 1
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                throw fail("value of attribute \(attributeName) of <\(tag)> is not quoted")
            }
            let quote = bytes[i]
            let valueStart = i + 1
            var end = valueStart
            while end < bytes.count && bytes[end] != quote { end += 1 }
            guard end < bytes.count else { throw fail("value of attribute \(attributeName) is never closed", at: valueStart) }
            guard attributeNames.insert(nameBytes).inserted else {
                throw fail("attribute \(attributeName) appears twice in <\(tag)>", at: start)
            }
            attributes.append(XMLAttribute(name: attributeName, value: Entities.decode(bytes[valueStart..<end])))
            i = end + 1
        }
    }

    mutating func finish(_ element: XMLElement) {
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(.element(element))
        }
    }
}

/// XML's five named entities and numeric references; anything else is kept as written, since
/// OLX often carries HTML entities such as `&nbsp;` that only the browser knows.
enum Entities {
    static func decode(_ slice: ArraySlice<UInt8>) -> String {
        guard slice.contains(UInt8(ascii: "&")) else { return String(decoding: slice, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(slice.count)
        var i = slice.startIndex
        while i < slice.endIndex {
            let b = slice[i]
            guard b == UInt8(ascii: "&"), let semicolon = slice[i...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                out.append(b)
                i += 1
                continue
            }
            let entity = String(decoding: slice[(i + 1)..<semicolon], as: UTF8.self)
            if let replacement = replacement(for: entity) {
                out.append(contentsOf: replacement.utf8)
                i = semicolon + 1
            } else {
                out.append(b)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func replacement(for entity: String) -> String? {
        switch entity {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            guard entity.hasPrefix("#") else { return nil }
            let digits = entity.dropFirst()
            let value = digits.first == "x" || digits.first == "X"
                ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            return value.flatMap(Unicode.Scalar.init).map { String(Character($0)) }
        }
    }
}
