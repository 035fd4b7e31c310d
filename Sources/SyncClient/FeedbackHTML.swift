import Foundation
import SafeText

/// Cleans the HTML an LMS sends back with a graded answer (`feedback_html`) down to what the
/// device's page may show: markup and style stay, anything that runs or navigates goes.
///
/// A tokenizer, not patterns: every tag kept is written again from its parsed name and
/// attributes, so a quote or `>` inside a value cannot smuggle an attribute past the check, and
/// text that is not a tag never turns into one (`<` before anything but a tag name is escaped).
public enum FeedbackHTML {
    public static let standardLimit = 64 << 10

    /// Elements dropped with everything inside them. A style sheet would restyle the whole page
    /// (hide the form, fake a grade); SVG's animation elements can set an attribute (`href`) to a
    /// `javascript:` URL after any check of the attributes written.
    static let droppedWithContent: Set<String> = [
        "script", "iframe", "object", "embed", "applet", "frame", "frameset", "noscript", "template", "noembed", "noframes",
        "style", "animate", "set", "animatemotion", "animatetransform",
    ]
    /// Elements whose tags are dropped and whose content stays (a form's inputs show the answer).
    static let droppedTags: Set<String> = ["form", "base", "meta", "link", "html", "head", "body"]
    static let urlAttributes: Set<String> = [
        "href", "src", "action", "formaction", "xlink:href", "data", "poster", "background", "srcset", "lowsrc", "dynsrc", "ping",
    ]

    /// `html` cleaned, at most `limit` bytes of UTF-8 (whole tokens only, so nothing is cut mid-tag).
    public static func clean(_ html: String, limit: Int = standardLimit) -> String {
        var scanner = HTMLScanner(bytes: Array(html.utf8))
        var out: [UInt8] = []
        while let token = scanner.next() {
            let piece: [UInt8]
            switch token {
            case .text(let text): piece = text
            case .tag(let tag): piece = kept(tag, scanner: &scanner)
            }
            guard out.count + piece.count <= limit else { break }
            out += piece
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The tag written again with its safe attributes only, or nothing.
    static func kept(_ tag: HTMLScanner.Tag, scanner: inout HTMLScanner) -> [UInt8] {
        if droppedWithContent.contains(tag.name) {
            if !tag.closing && !tag.selfClosing { scanner.skip(pastClosing: tag.name) }
            return []
        }
        // A name with other characters (`<scr<script>`) is no element a page needs.
        guard !droppedTags.contains(tag.name), tag.name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") })
        else { return [] }
        if tag.closing { return Array("</\(tag.name)>".utf8) }
        var text = "<" + tag.name
        for (name, value) in tag.attributes where isSafe(name: name, value: value) {
            text += value.map { " \(name)=\"\(escaped($0))\"" } ?? " \(name)"
        }
        return Array((text + (tag.selfClosing ? " />" : ">")).utf8)
    }

    static func isSafe(name: String, value: String?) -> Bool {
        guard !name.hasPrefix("on"), name != "srcdoc", name != "formaction" else { return false }
        guard urlAttributes.contains(name), let value else { return true }
        let plain = decodedForScheme(value)
        return !["javascript:", "vbscript:", "data:", "livescript:"].contains { plain.hasPrefix($0) } || plain.hasPrefix("data:image/")
    }

    /// The value as a browser reads its scheme: character references decoded, whitespace and
    /// control characters (which browsers skip inside a scheme) removed, lower case.
    static func decodedForScheme(_ value: String) -> String {
        var text = value
        for (entity, character) in [("&colon;", ":"), ("&tab;", ""), ("&newline;", ""), ("&lpar;", "(")] {
            text = text.replacingOccurrences(of: entity, with: character, options: .caseInsensitive)
        }
        text = decodeNumericReferences(text)
        return String(text.unicodeScalars.filter { $0.value > 0x20 && $0.value != 0x7F }.map(Character.init)).lowercased()
    }

    /// `&#106;` and `&#x6A;` (the `;` optional, as browsers take them) as their characters.
    static func decodeNumericReferences(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let amp = rest.range(of: "&#") {
            out += rest[..<amp.lowerBound]
            var digits = rest[amp.upperBound...]
            let hex = digits.first == "x" || digits.first == "X"
            if hex { digits = digits.dropFirst() }
            let number = digits.prefix { hex ? $0.isHexDigit : $0.isASCII && $0.isNumber }
            guard !number.isEmpty, let value = UInt32(number.prefix(8), radix: hex ? 16 : 10), let scalar = Unicode.Scalar(value) else {
                out += "&#"
                rest = rest[amp.upperBound...]
                continue
            }
            out.unicodeScalars.append(scalar)
            rest = digits[number.endIndex...]
            if rest.first == ";" { rest = rest.dropFirst() }
        }
        return out + rest
    }

    static func escaped(_ value: String) -> String {
        HTMLEscape.escape(value, "\"<")
    }
}
