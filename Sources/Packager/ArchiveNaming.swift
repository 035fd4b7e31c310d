import Crypto

/// Where a block's archive lives under the output folder: a pure function of its type and
/// url_name. Plain lowercase names are used as they are (`html/0a1b2c.zip`); any other name is
/// lowercased, made safe, and suffixed with a hash of the exact name, so no two names collide,
/// even on case-insensitive file systems.
public enum ArchiveNaming {
    public static func archivePath(type: String, urlName: String) -> String {
        "\(component(type))/\(component(urlName)).zip"
    }

    /// The folder a client unpacks the archive into: the archive path without `.zip`.
    public static func folder(ofArchive archive: String) -> String {
        archive.hasSuffix(".zip") ? String(archive.dropLast(4)) : archive
    }

    static func component(_ name: String) -> String {
        if isPlain(name) { return name }
        let safe = String(String.UnicodeScalarView(name.lowercased().unicodeScalars.map { scalar in
            switch scalar {
            case "a"..."z", "0"..."9", "-", "_": return scalar
            default: return "_"
            }
        }))
        let digest = SHA256.hash(data: Array(name.utf8)).prefix(4).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        return String(safe.prefix(80)) + "-" + digest
    }

    static func isPlain(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || ("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.count <= 120 && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
