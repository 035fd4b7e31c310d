import FileSystem
import Foundation
import Manifest

/// How a changed archive replaces the one the previous publish names without a moment in which
/// a manifest names a file whose bytes it does not describe:
///
/// 1. the new archive is written under a staged name beside the old one;
/// 2. a manifest naming the staged copies replaces the old manifest;
/// 3. each staged copy is hard-linked over its final name (an atomic rename);
/// 4. the final manifest replaces that one, and the staged names are removed.
///
/// A kill at any step leaves a manifest whose every archive exists with its size and sha256.
enum Staging {
    static let marker = ArchivePath.stagedMarker

    /// `html/.x.zip.staged-0123abcd…`: hidden, and distinct per content.
    static func stagedPath(of archive: String, contentHash: String) -> String {
        ArchivePath.staged(archive, contentHash: contentHash)
    }

    static func isStaged(_ path: String) -> Bool { path.containsUTF8(marker) }

    /// An archive path a manifest this build wrote may name: `<type>/<name>.zip`, or (in a
    /// manifest a killed build left mid-staging) its staged copy `<type>/.<name>.zip.staged-<hash>`.
    static func isPublishable(_ path: String) -> Bool {
        ArchivePath.isWellFormed(path) || ArchivePath.original(ofStaged: path) != nil
    }

    static func pointing(_ entry: BlockEntry, at path: String) -> BlockEntry {
        var copy = entry
        copy.moveArchive(to: path)
        return copy
    }

    /// Puts the staged file at `final` atomically; the staged name stays valid until removed.
    static func promote(_ staged: String, to final: String) throws {
        let temporary = DurableFile.temporaryPath(beside: final)
        unlink(temporary)
        if link(staged, temporary) != 0 {
            // File systems without hard links: a copy is as good, only slower, once its data
            // is on disk like the staged file's.
            try FileManager.default.copyItem(atPath: staged, toPath: temporary)
            do {
                try DurableFile.syncFile(temporary)
            } catch {
                unlink(temporary)
                throw BuildError.output(path: final, reason: "cannot sync its copy to disk: \(String(cString: strerror(error.errno)))")
            }
        }
        guard rename(temporary, final) == 0 else {
            let code = errno
            unlink(temporary)
            throw BuildError.output(path: final, reason: "cannot replace it: \(String(cString: strerror(code)))")
        }
    }
}
