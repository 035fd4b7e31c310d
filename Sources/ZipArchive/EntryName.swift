/// Entry names are relative, `/`-separated, and can never point outside the folder they unpack into.
public enum EntryName {
    public static func validate(_ name: String) throws {
        func fail(_ reason: String) -> ZipError { .invalidEntryName(name, reason: reason) }
        if name.isEmpty { throw fail("empty name") }
        if name.utf8.count > 0xFFFF { throw fail("longer than 65535 bytes") }
        if name.utf8.contains(0) { throw fail("contains a NUL byte") }
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
        }
    }
}
