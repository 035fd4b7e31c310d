/// Entry names are relative, `/`-separated, and can never point outside the folder they unpack into.
public enum EntryName {
    /// A file name may have 255 bytes on the file systems clients use.
    public static let maximumComponentLength = 255

    /// C0 controls (newline, tab, CR…), DEL and C1 controls.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    public static func validate(_ name: String) throws {
        func fail(_ reason: String) -> ZipError { .invalidEntryName(name, reason: reason) }
        if name.isEmpty { throw fail("empty name") }
        if name.utf8.count > 0xFFFF { throw fail("longer than 65535 bytes") }
        if name.utf8.contains(0) { throw fail("contains a NUL byte") }
        // Line-based tools and state (inventories, logs, terminals) break on them, and no
        // course file needs one: refused on both sides, by the builder and the client.
        if let control = name.unicodeScalars.first(where: isControl) {
            throw fail("contains the control character U+\(String(control.value, radix: 16, uppercase: true).leftPadded(4))")
        }
        if name.contains("\\") { throw fail("contains a backslash") }
        if name.hasPrefix("/") { throw fail("absolute path") }
        if name.hasSuffix("/") { throw fail("directory entries are not written") }
        let first = name.utf8.first ?? 0
        if name.utf8.count >= 2, Array(name.utf8)[1] == UInt8(ascii: ":"),
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first & 0xDF)
        {
            throw fail("starts with a drive letter")
        }
        for component in name.split(separator: "/", omittingEmptySubsequences: false) {
            if component.isEmpty { throw fail("empty path component") }
            if component == "." || component == ".." { throw fail("contains a \(component) component") }
            if component.utf8.count > maximumComponentLength {
                throw fail("a component is longer than \(maximumComponentLength) bytes, more than a file system takes")
            }
        }
    }
}

extension String {
    fileprivate func leftPadded(_ length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
