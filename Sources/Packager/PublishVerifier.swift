import FileSystem
import Foundation
import Manifest
import ZipArchive

/// Checks a published folder the way a client would trust it: every archive the manifest names
/// exists inside the folder, has the manifest's size and sha256, and opens with every CRC right.
public enum PublishVerifier {
    public struct Result: Sendable {
        public var manifest: CourseManifest
        public var archivesChecked = 0
        public var problems: [Diagnostic] = []
    }

    public static func verify(folder: String) throws(BuildError) -> Result {
        let path = folder + "/manifest.json"
        let manifest: CourseManifest
        do {
            guard let read = try ManifestFile.read(path) else {
                throw BuildError.output(path: path, reason: "no manifest.json: not a published folder")
            }
            manifest = read
        } catch let error as BuildError {
            throw error
        } catch let error as ManifestError {
            throw .previousManifest(error)
        } catch {
            throw .output(path: path, reason: "\(error)")
        }
        var result = Result(manifest: manifest)
        var seen = Set<String>()
        var blocks = manifest.blocks
        if let runtime = manifest.runtime {
            // Checked like a block's archive; its pages are under its own folders, not index.html.
            blocks.append(BlockEntry(
                usageID: "runtime", type: "runtime", displayName: nil, parents: [], archive: runtime.archive,
                size: runtime.size, sha256: runtime.sha256, contentHash: runtime.contentHash, lastModified: manifest.publishedAt))
        }
        for block in blocks {
            func problem(_ message: String) {
                result.problems.append(Diagnostic(block: block.usageID, file: block.archive, message: message))
            }
            if !seen.insert(block.usageID).inserted { problem("listed twice in the manifest") }
            guard let archive = block.archive else { continue }
            guard Staging.isPublishable(archive) else {
                problem("archive path escapes the folder")
                continue
            }
            result.archivesChecked += 1
            let file = folder + "/" + archive
            guard let size = FileStamp.of(file)?.size else {
                problem("archive is missing")
                continue
            }
            if size != block.size { problem("archive is \(size) bytes, the manifest says \(block.size.map(String.init) ?? "nothing")") }
            do {
                let digest = try CourseFileDigest.archive(file)
                if digest != block.sha256 { problem("sha256 is \(digest), the manifest says \(block.sha256 ?? "nothing")") }
                let reader = try ZipReader(path: file)
                try reader.verify()
                if block.type != "runtime", !reader.entries.contains(where: { $0.name == "index.html" }) { problem("archive has no index.html") }
            } catch {
                problem("\(error)")
            }
        }
        return result
    }
}
