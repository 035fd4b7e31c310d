import CourseExport

/// Escaping and serialization for the HTML the renderers generate.
enum HTMLText {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
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
