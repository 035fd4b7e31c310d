/// The manifest's contract for archive paths, which builds, publishers and clients all rely on:
/// exactly `<type>/<name>.zip`, two plain components (ASCII letters, digits, `_-~.`, none
/// starting with a dot). Such a path can never name the manifest, a type folder, a hidden
/// file (builds and clients keep their own state in dot-names) or anything outside the folder,
/// and one block's install folder can never lie inside another's.
public enum ArchivePath {
    /// A file name may have 255 bytes; a client appends a staging suffix to the folder name.
    public static let maximumComponentLength = 200

    /// `html/x.zip` → `html/x`, the folder a client unpacks it into; nil for any other shape.
    public static func installFolder(of archive: String) -> String? {
        guard archive.hasSuffix(".zip") else { return nil }
        let folder = archive.dropLast(4)
        let parts = folder.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy(isPlain) else { return nil }
        return String(folder)
    }

    public static func isWellFormed(_ archive: String) -> Bool {
        installFolder(of: archive) != nil
    }

    /// By bytes: a manifest names 100,000 archives, and every one is checked on every read.
    private static func isPlain(_ part: Substring) -> Bool {
        let bytes = part.utf8
        guard let first = bytes.first, first != UInt8(ascii: "."), bytes.count <= maximumComponentLength else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "~"), UInt8(ascii: "."):
                true
            default: false
            }
        }
    }
}
