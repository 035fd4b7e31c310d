/// Rewrites the references of a page or stylesheet: each reference's bytes are replaced by what
/// `resolve` returns; every other byte stays exactly as it was.
public enum LinkRewriter {
    public enum Resolution: Sendable, Equatable {
        case keep
        case replace(String)
    }

    public enum Document { case html, css }

    public static func references(in bytes: [UInt8], as document: Document) -> [Reference] {
        switch document {
        case .html: return HTMLScanner.references(in: bytes)
        case .css: return CSSScanner.references(in: bytes)
        }
    }

    public static func rewrite(_ bytes: [UInt8], references: [Reference], resolve: (Reference) -> Resolution) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 16)
        var position = 0
        for reference in references.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            guard reference.range.lowerBound >= position else { continue }
            guard case .replace(let replacement) = resolve(reference) else { continue }
            out.append(contentsOf: bytes[position..<reference.range.lowerBound])
            out.append(contentsOf: replacement.utf8)
            position = reference.range.upperBound
        }
        out.append(contentsOf: bytes[position...])
        return out
    }
}
