/// The manifest's contract for archive paths, which builds, publishers and clients all rely on:
/// exactly `<type>/<name>.zip`, two plain components (ASCII letters, digits, `_-~.`, none
/// starting with a dot). Such a path can never name the manifest, a type folder, a hidden
/// file (builds and clients keep their own state in dot-names) or anything outside the folder,
/// and one block's install folder can never lie inside another's.
public enum ArchivePath {
    /// A file name may have 255 bytes; a client appends a staging suffix to the folder name.
    public static let maximumComponentLength = 200

    /// `html/x.zip` → `html/x`, the folder a client unpacks it into; nil for any other shape.
    /// By bytes, as `isPlain` is: splitting into `Character`s was most of the time of checking
    /// the 92,000 archive paths a manifest of 100,000 blocks names, on each of its reads. Every
    /// byte that may appear in a plain component is ASCII, so no `Character` is needed to tell.
    public static func installFolder(of archive: String) -> String? {
        let bytes = archive.utf8
        guard bytes.count > 4, bytes.suffix(4).elementsEqual(".zip".utf8) else { return nil }
        let end = bytes.index(bytes.endIndex, offsetBy: -4)
        let folder = bytes[..<end]
        guard let slash = folder.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let name = folder[folder.index(after: slash)...]
        guard isPlain(folder[..<slash]), isPlain(name) else { return nil }
        return String(archive[..<end])
    }

    public static func isWellFormed(_ archive: String) -> Bool {
        installFolder(of: archive) != nil
    }

    /// The longest path an archive may have, staged (`staged(_:contentHash:)`) or not: two
    /// components and `.zip`, a dot, the marker and the tag.
    public static let longestStagedPath = 2 * maximumComponentLength + 1 + 4 + 1 + stagedMarker.utf8.count + stagedTagLength

    /// What a build puts between an archive's name and the tag of a staged copy.
    public static let stagedMarker = ".staged-"
    /// A staged copy's tag: the first 16 hex digits of its content hash.
    static let stagedTagLength = 16

    /// `html/x.zip` staged as `html/.x.zip.staged-<tag>`: hidden, and distinct per content.
    public static func staged(_ archive: String, contentHash: String) -> String {
        let slash = archive.lastIndex(of: "/")
        let folder = slash.map { String(archive[...$0]) } ?? ""
        let name = slash.map { String(archive[archive.index(after: $0)...]) } ?? archive
        return "\(folder).\(name)\(stagedMarker)\(contentHash.prefix(stagedTagLength))"
    }

    /// The archive a staged copy stands for (`html/.x.zip.staged-0123456789abcdef` →
    /// `html/x.zip`), nil for any other path. Builds, verifiers and publishers all read staged
    /// names from manifests and records they did not necessarily write, so this is the one
    /// reader of the shape: a name that is nothing but the marker (`html/.staged-…`) made an
    /// inverted range in each of the two readers it replaces, and crashed `verify` and `publish`.
    public static func original(ofStaged path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].hasPrefix(".") else { return nil }
        let hidden = parts[1].dropFirst()
        guard let marker = hidden.range(of: stagedMarker, options: .backwards) else { return nil }
        let tag = hidden[marker.upperBound...]
        guard tag.utf8.count == stagedTagLength, tag.utf8.allSatisfy(Self.isHexDigit) else { return nil }
        let original = String(parts[0]) + "/" + String(hidden[..<marker.lowerBound])
        return isWellFormed(original) ? original : nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        Unicode.Scalar(byte).properties.isASCIIHexDigit
    }

    /// By bytes: a manifest names 100,000 archives, and every one is checked on every read.
    private static func isPlain(_ bytes: Substring.UTF8View) -> Bool {
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
