import FileSystem
import Foundation

/// Where a course goes within the target.
public enum PublishLayout: Sendable, Equatable {
    /// Under its own folder, `CourseFolder.name(for:)`: many courses share one target.
    case perCourse
    /// At the target itself, for clients already pointed there. A manifest of another course
    /// there is never replaced.
    case flat
}

/// The folder of a course within a shared target.
public enum CourseFolder {
    /// `course-v1:Org+Num+Run` → `course-v1_3AOrg_2BNum_2BRun-<8 hex>`: every UTF-8 byte of the id
    /// outside `A-Z a-z 0-9 - .` (and a leading `.`) becomes `_` and its two hex digits, then
    /// `-` and the first 8 hex digits of the id's SHA-256 follow. The escaping can be undone, so
    /// two ids never share a folder; the hash keeps ids that differ only in case apart on
    /// case-insensitive file systems. An escaped id longer than 150 characters keeps its first
    /// 100 and the whole SHA-256 instead, so the name stays within a file name's 255 bytes.
    public static func name(for courseID: String) -> String {
        let digest = SHA256Hex.of(Array(courseID.utf8))
        var escaped = ""
        for (offset, byte) in courseID.utf8.enumerated() {
            if Self.keeps(byte, first: offset == 0) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "_" + String(format: "%02X", byte)
            }
        }
        guard escaped.count <= 150 else { return String(escaped.prefix(100)) + "-" + digest }
        return escaped + "-" + String(digest.prefix(8))
    }

    private static func keeps(_ byte: UInt8, first: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            return true
        case UInt8(ascii: "."):
            // A leading dot would make a hidden folder, which web servers often refuse to serve.
            return !first
        default:
            return false
        }
    }
}

