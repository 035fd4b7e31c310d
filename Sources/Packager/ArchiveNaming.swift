import Crypto

/// Where a block's archive lives under the output folder: a pure, injective function of its
/// type and url_name, whose result is a safe file name on every file system a client uses.
///
/// A name is spelled byte by byte: `a`–`z`, `0`–`9`, `_` and `-` stand for themselves, an
/// uppercase letter is `~` and the letter in lowercase, and any other byte is `~~` and two
/// lowercase hex digits. So plain lowercase names (`html/0a1b2c.zip`, `intro-1a2b3c4d`) are
/// used as they are, `Intro` is `~intro`, `café` is `caf~~c3~~a9`. The spelling is a
/// prefix code (after `~` comes either a letter or `~` and two hex digits), so two names
/// never share it; it holds only lowercase ASCII, so two names that differ only by case never
/// meet on a case-insensitive file system. A name whose spelling would be empty or longer than
/// `maximumSpelledLength` is `~~~` and the 64 hex digits of the SHA-256 of its bytes instead:
/// no spelling contains `~~~`, so that form meets no spelled name, and two such forms are the
/// same only if SHA-256 collides.
public enum ArchiveNaming {
    /// Long enough for any url_name Studio makes, short enough that `.zip`, a client's staging
    /// suffix and the type folder stay far below the 255 bytes a file name may have.
    public static let maximumSpelledLength = 120

    public static func archivePath(type: String, urlName: String) -> String {
        folderPath(type: type, urlName: urlName) + ".zip"
    }

    /// The folder a client unpacks the block's archive into (`ArchivePath.installFolder`).
    public static func folderPath(type: String, urlName: String) -> String {
        "\(component(type))/\(component(urlName))"
    }

    /// One path component naming `name`; never empty, `.`, `..`, nor containing `/` or `.`.
    static func component(_ name: String) -> String {
        var spelled: [UInt8] = []
        spelled.reserveCapacity(name.utf8.count)
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                spelled.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                spelled += [UInt8(ascii: "~"), byte + 32]
            default:
                spelled += [UInt8(ascii: "~"), UInt8(ascii: "~"), hexDigit(byte >> 4), hexDigit(byte & 0xF)]
            }
            if spelled.count > maximumSpelledLength { break }
        }
        guard !spelled.isEmpty, spelled.count <= maximumSpelledLength else {
            return "~~~" + SHA256.hash(data: Array(name.utf8)).map { String(decoding: [hexDigit($0 >> 4), hexDigit($0 & 0xF)], as: UTF8.self) }.joined()
        }
        return String(decoding: spelled, as: UTF8.self)
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
