/// Recognises an html component that only styles its unit: in the LMS every component of a unit
/// shares one page, so a component holding just `<style>`, `<link>` and `<script>` elements
/// (Studio's usual way to add a stylesheet or script to a unit) affects all of them.
enum StyleOnlyContent {
    static let headElements: Set<String> = ["style", "link", "script"]

    /// The elements themselves, in order, when the content is nothing else (besides comments and
    /// white space); nil otherwise.
    static func elements(_ html: [UInt8]) -> [UInt8]? {
        var i = 0
        var kept: [UInt8] = []
        let n = html.count
        while i < n {
            let byte = html[i]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C {
                i += 1
                continue
            }
            guard byte == UInt8(ascii: "<") else { return nil }
            if html[i...].starts(with: Array("<!--".utf8)) {
                guard let end = find(Array("-->".utf8), in: html, from: i + 4) else { return nil }
                i = end + 3
                continue
            }
            var j = i + 1
            while j < n, isNameByte(html[j]) { j += 1 }
            let name = String(decoding: html[(i + 1)..<j], as: UTF8.self).lowercased()
            guard headElements.contains(name), let tagEnd = html[j...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
            var end = tagEnd + 1
            if name != "link" {
                guard let close = ByteSearch.firstCaseInsensitive(html, "</" + name, from: end),
                    let closeEnd = html[close...].firstIndex(of: UInt8(ascii: ">"))
                else { return nil }
                end = closeEnd + 1
            }
            kept += html[i..<end]
            kept.append(UInt8(ascii: "\n"))
            i = end
        }
        return kept.isEmpty ? nil : kept
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard start <= haystack.count - needle.count else { return nil }
        for i in start...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) {
            return i
        }
        return nil
    }
}
