import CourseExport
import Crypto
import FileSystem
import ZipArchive

/// SHA-256 of files the build reads or writes, with the failure said as the build says it: a
/// course file that cannot be read is the course's fault, an archive the output's.
enum CourseFileDigest {
    static func sha256(_ path: String) throws(CourseError) -> String {
        do {
            return try SHA256Hex.ofFile(path)
        } catch {
            throw .unreadable(path: path, reason: "cannot read it")
        }
    }

    static func archive(_ path: String) throws(BuildError) -> String {
        do {
            return try SHA256Hex.ofFile(path)
        } catch {
            throw .output(path: path, reason: "cannot read the archive back to hash it")
        }
    }
}
