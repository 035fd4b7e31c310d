import Crypto

/// How the LMS's XML import names a block (its url_name, the last part of its usage id), so
/// that answers and completions sent under coursepack's ids reach the LMS's blocks.
enum BlockNaming {
    /// Tags whose later uses of a taken name the LMS renames (they keep learner state); a
    /// later use of any other tag's name keeps it, and the LMS keeps one block of that id.
    static let renamedWhenReused: Set<String> = ["problem", "sequential", "video", "course", "chapter", "poll_question", "vertical"]

    enum DeclaredName: Equatable {
        /// `url_name` or `slug`, used as written.
        case explicit(attribute: String, String)
        /// `name` or `display_name`, cleaned as the LMS cleans it into a url_name.
        case derived(String)

        var value: String {
            switch self {
            case .explicit(_, let value), .derived(let value): return value
            }
        }
    }

    /// The LMS's order: `url_name`, `slug`, then `name` and `display_name` made id-safe; the
    /// first attribute present decides, and an empty one means no name.
    static func declaredName(of element: XMLElement) -> DeclaredName? {
        for attribute in ["url_name", "slug"] {
            if let value = element.attribute(attribute) { return value.isEmpty ? nil : .explicit(attribute: attribute, value) }
        }
        for attribute in ["name", "display_name"] {
            if let value = element.attribute(attribute) {
                let cleaned = cleanedName(value)
                return cleaned.isEmpty ? nil : .derived(cleaned)
            }
        }
        return nil
    }

    /// opaque-keys' `BlockUsageLocator.clean`: every character but Python's word characters
    /// (letters, numbers, `_`), `.`, `%` and `-` becomes `_`, and runs of `_` become one.
    static func cleanedName(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            let next: Character = isKept(scalar) ? Character(scalar) : "_"
            if next == "_" && out.last == "_" { continue }
            out.append(next)
        }
        return out
    }

    /// Python's `\w` (str.isalnum or `_`) plus `.`, `%`, `-`. Marks are not letters there.
    private static func isKept(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return true
        default: return scalar.properties.numericType != nil || ".%-_".unicodeScalars.contains(scalar)
        }
    }

    /// The LMS's name for a block without one, or for a later use of a taken name: the tag,
    /// the taken name (less an earlier hash of this form), and the first 12 hex digits of the
    /// SHA-1 of the element as the import serialised it.
    static func fallbackName(tag: String, taken: String?, serialized: [UInt8]) -> String {
        var original = taken ?? ""
        if looksLikeFallback(original, tag: tag) {
            // As Python's slice [len(tag) + 1:-12] (on characters, empty when they cross).
            let characters = Array(original)
            let start = min(tag.count + 1, characters.count)
            let end = max(characters.count - 12, 0)
            original = start < end ? String(characters[start..<end]) : ""
        }
        let digest = Insecure.SHA1.hash(data: serialized).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return tag + (original.isEmpty ? "" : "_" + original) + "_" + digest.prefix(12)
    }

    private static func looksLikeFallback(_ name: String, tag: String) -> Bool {
        let hexDigits = name.unicodeScalars.suffix(12)
        return name.hasPrefix(tag) && hexDigits.count == 12 && hexDigits.allSatisfy { $0.properties.isASCIIHexDigit }
    }

    /// How the LMS serialises a container's children before naming them: a split test and a
    /// library's children as ASCII bytes, every other container's as UTF-8.
    static func serializationOutput(ofChildrenOf type: String) -> LXMLSerializer.Output {
        ["split_test", "library_content", "itembank"].contains(type) ? .ascii : .unicode
    }
}
