import Diagnostics
import FileSystem
import Foundation
import Manifest
import ZipArchive

/// How a published folder's manifest files differ from each other: the index decodes, every
/// part it names is there with its size and hash and decodes, and the manifest they assemble
/// is `manifest.json` when both are there. Its result starts a `PublishVerifier` result, whose
/// manifest is `manifest.json`, else the assembled one (of the parts that could be read).
enum ManifestCheck {
    static func read(folder: String) throws(BuildError) -> PublishVerifier.Result {
        let wholePath = folder + "/" + PublishedManifest.wholeFileName
        let indexPath = folder + "/" + ManifestIndex.fileName
        let whole: CourseManifest?
        let indexBytes: [UInt8]?
        do {
            indexBytes = try PublishedManifest.readFile(indexPath)
            whole = try PublishedManifest.readFile(wholePath).map { bytes throws(ManifestError) in
                try ManifestFile.decode(Data(bytes), path: wholePath)
            }
        } catch {
            throw .previousManifest(error)
        }
        guard let indexBytes else {
            guard let whole else {
                throw .output(path: folder, reason: "no \(PublishedManifest.wholeFileName) or \(ManifestIndex.fileName): not a published folder")
            }
            // A publish as builders before the split form wrote it: clients read manifest.json
            // when a source has no index, so nothing is missing.
            return PublishVerifier.Result(manifest: whole)
        }
        let index: ManifestIndex
        do {
            index = try ManifestFile.decodeIndex(indexBytes, path: indexPath)
        } catch {
            guard let whole else { throw .previousManifest(error) }
            var result = PublishVerifier.Result(manifest: whole)
            result.problems.append(problem(whole.courseID, ManifestIndex.fileName, "\(error)"))
            return result
        }
        return check(index, indexSize: indexBytes.count, whole: whole, folder: folder)
    }

    /// Every part the index names, then the assembled manifest against `whole`.
    private static func check(_ index: ManifestIndex, indexSize: Int, whole: CourseManifest?, folder: String) -> PublishVerifier.Result {
        var parts: [ManifestPart] = []
        var problems: [Diagnostic] = []
        var seen = Set<String>()
        for reference in index.parts {
            if !seen.insert(reference.sha256).inserted {
                problems.append(problem(index.courseID, reference.path, "named twice in \(ManifestIndex.fileName)"))
            }
            do {
                parts.append(try PublishedManifest.readPart(reference, index: index, at: folder) { relative throws(ManifestError) in
                    try PublishedManifest.readFile(folder + "/" + relative)
                })
            } catch {
                problems.append(problem(index.courseID, reference.path, "\(error)"))
            }
        }
        if let kind = misordered(index.parts) {
            problems.append(problem(index.courseID, ManifestIndex.fileName, "names a part of \(kind) after the outline's parts; blocks come first"))
        }
        let assembled = ManifestSplit.assemble(index, parts: parts)
        if let whole, problems.isEmpty, let difference = difference(assembled, whole) {
            problems.append(problem(
                index.courseID, ManifestIndex.fileName,
                "its parts assemble another manifest than \(PublishedManifest.wholeFileName) (\(difference) differ): one of them is not from the last build"))
        }
        var result = PublishVerifier.Result(manifest: whole ?? assembled)
        result.partsChecked = index.parts.count
        result.problems = index.clientRefusals(indexSize: indexSize).map { problem(index.courseID, $0.file, $0.message) } + problems
        return result
    }

    /// "blocks" when a part holding blocks follows one holding outline entries.
    private static func misordered(_ parts: [PartReference]) -> String? {
        guard let firstOutline = parts.firstIndex(where: { $0.containers > 0 }) else { return nil }
        return parts[firstOutline...].contains(where: { $0.blocks > 0 }) ? "blocks" : nil
    }

    /// Which top-level fields of two manifests differ, nil when they are equal.
    static func difference(_ a: CourseManifest, _ b: CourseManifest) -> String? {
        guard a != b else { return nil }
        var fields: [String] = []
        if a.courseID != b.courseID { fields.append("course_id") }
        if a.publishedAt != b.publishedAt { fields.append("published_at") }
        if a.generator != b.generator { fields.append("generator") }
        if a.blocks != b.blocks { fields.append("blocks") }
        if a.outline != b.outline { fields.append("outline") }
        if a.runtime != b.runtime { fields.append("runtime") }
        if a.search != b.search { fields.append("search") }
        if a.files != b.files { fields.append("files") }
        return fields.isEmpty ? "other fields" : fields.joined(separator: ", ")
    }

    private static func problem(_ courseID: String, _ file: String, _ message: String) -> Diagnostic {
        Diagnostic(block: courseID, file: file, message: message, id: .publishMismatch)
    }
}
