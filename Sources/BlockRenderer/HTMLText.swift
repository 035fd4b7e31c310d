import CourseExport
import Foundation

/// Escaping and serialization for the HTML the renderers generate.
enum HTMLText {
    /// Every `&`, `<`, `>` and `"` byte escaped. Bytes, not Characters: a `<` that a combining
    /// mark follows is one Character but still a `<` to a browser, and walking grapheme
    /// clusters made escaping a transcript's thousands of cues a visible part of a build.
    static func escape(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case 0x26: out += "&amp;".utf8
            case 0x3C: out += "&lt;".utf8
            case 0x3E: out += "&gt;".utf8
            case 0x22: out += "&quot;".utf8
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with each line feed replaced by `<br>`.
    static func breakingLines(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(0x0A) else { return text }
        // Foundation's search leaves "\r\n" and a line feed that a combining mark follows
        // alone; those rare texts keep its answer, so no page changes.
        let ambiguous = utf8.contains(0x0D) || zip(utf8, utf8.dropFirst()).contains { $0 == 0x0A && $1 >= 0x80 }
        guard !ambiguous else { return text.replacingOccurrences(of: "\n", with: "<br>") }
        return utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }.joined(separator: "<br>")
    }

    /// Elements that never have content in HTML.
    static let voidElements: Set<String> = ["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]

    /// Attributes that can carry an answer (`correct`, `answer`) are never written.
    static func attributes(_ element: XMLElement) -> String {
        element.attributes.filter { !["correct", "answer", "expect", "cfn", "hintfn"].contains($0.name.lowercased()) }
            .map { " \($0.name)=\"\(escape($0.value))\"" }.joined()
    }

    /// Writes an OLX element back out as HTML, leaving out the elements `skip` names.
    static func serialize(_ nodes: [XMLNode], skip: (XMLElement) -> Bool) -> String {
        var out = ""
        for node in nodes {
            switch node {
            case .text(let text):
                out += escape(text)
            case .element(let element):
                guard !skip(element) else { continue }
                let name = element.name
                let attributes = Self.attributes(element)
                if voidElements.contains(name.lowercased()) {
                    out += "<\(name)\(attributes)>"
                } else {
                    out += "<\(name)\(attributes)>" + serialize(element.children, skip: skip) + "</\(name)>"
                }
            }
        }
        return out
    }
}
