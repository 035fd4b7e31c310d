import Diagnostics
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
        /// Course files (`files/`) checked: decoded and hashed.
        public var contentsChecked = 0
        /// Parts of the split manifest checked: size, hash, decoded.
        public var partsChecked = 0
        public var problems: [Diagnostic] = []
    }

    public static func verify(folder: String) throws(BuildError) -> Result {
        var result = try ManifestCheck.read(folder: folder)
        var seen = Set<String>()
        let manifest = result.manifest
        for block in manifest.blocks + sharedEntries(of: manifest) {
            var messages: [String] = []
            if !seen.insert(block.usageID).inserted { messages.append("listed twice in the manifest") }
            if let archive = block.archive {
                if Staging.isPublishable(archive) {
                    result.archivesChecked += 1
                    messages += problems(of: block, at: folder + "/" + archive)
                } else {
                    messages.append("archive path escapes the folder")
                }
            }
            messages += CourseFileCheck.listingProblems(
                block.files, unpackedSize: block.unpackedSize, archive: block.archive.flatMap { Staging.isPublishable($0) ? $0 : nil },
                folder: folder, files: manifest.files)
            result.problems += messages.map { Diagnostic(block: block.usageID, file: block.archive, message: $0, id: .publishMismatch) }
        }
        checkCourseFiles(in: folder, into: &result)
        return result
    }

    /// The published contents decode to their names. (Files the manifest does not name are not
    /// problems here: a publish target keeps removed ones through their grace period.)
    private static func checkCourseFiles(in folder: String, into result: inout Result) {
        let manifest = result.manifest
        result.contentsChecked = manifest.files?.count ?? 0
        for (file, message) in CourseFileCheck.contentProblems(in: folder, manifest: manifest) {
            result.problems.append(Diagnostic(block: manifest.courseID, file: file, message: message, id: .publishMismatch))
        }
    }

    /// The shared archives (runtime, search index), checked like a block's archive under their
    /// kind's name.
    private static func sharedEntries(of manifest: CourseManifest) -> [BlockEntry] {
        SharedArchive.Kind.allCases.compactMap { kind in
            manifest[shared: kind].map {
                var entry = BlockEntry(
                    usageID: kind.folder, type: kind.folder, displayName: nil, parents: [], archive: $0.archive,
                    size: $0.size, sha256: $0.sha256, contentHash: $0.contentHash, lastModified: manifest.publishedAt)
                entry.files = $0.files
                entry.unpackedSize = $0.unpackedSize
                return entry
            }
        }
    }

    /// How the archive at `file` differs from what the manifest says of it.
    private static func problems(of block: BlockEntry, at file: String) -> [String] {
        guard let size = FileStamp.of(file)?.size else { return ["archive is missing"] }
        var problems: [String] = []
        if size != block.size { problems.append("archive is \(size) bytes, the manifest says \(block.size.map(String.init) ?? "nothing")") }
        do {
            let digest = try CourseFileDigest.archive(file)
            if digest != block.sha256 { problems.append("sha256 is \(digest), the manifest says \(block.sha256 ?? "nothing")") }
            let reader = try ZipReader(path: file)
            try reader.verify()
            // A shared archive's pages are under folders of their own, with no index.html.
            if SharedArchive.Kind(rawValue: block.type) == nil, !reader.entries.contains(where: { $0.name == "index.html" }) {
                problems.append("archive has no index.html")
            }
        } catch {
            problems.append("\(error)")
        }
        return problems
    }
}
