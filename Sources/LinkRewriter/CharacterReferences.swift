/// Decodes the HTML character references that occur in URLs (`&amp;`, `&quot;`, numeric ones).
public enum CharacterReferences {
    static let named: [String: String] = ["amp": "&", "quot": "\"", "apos": "'", "lt": "<", "gt": ">", "nbsp": "\u{A0}"]

    public static func decode(_ slice: ArraySlice<UInt8>) -> String {
        let text = String(decoding: slice, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semi = after.prefix(10).firstIndex(of: ";"), let value = replacement(String(after[..<semi])) {
                out += value
                rest = after[after.index(after: semi)...]
            } else {
                out += "&"
                rest = after
            }
        }
        return out + rest
    }

    static func replacement(_ entity: String) -> String? {
        if let named = named[entity] { return named }
        guard entity.hasPrefix("#") else { return nil }
        let digits = entity.dropFirst()
        let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
        return value.flatMap(Unicode.Scalar.init).map { String(Character($0)) }
    }
}
