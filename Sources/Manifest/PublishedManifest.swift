import FileSystem
import Foundation
import ParallelMap

/// A publish as its folder (or a target) holds it: `manifest.json` while it fits the clients'
/// limit, `manifest-index.json` and the parts it names. Every local reader (the build's previous
/// publish, `coursepack verify`, the publisher) reads it here, so they agree on which file wins:
/// `manifest.json` when present (it is written before the index, and is the whole manifest),
/// else the index with its parts, each checked against the hash and size the index gives.
public struct PublishedManifest: Sendable {
    public var manifest: CourseManifest
    /// Whether `manifest.json` was there (and `manifest` is what it holds).
    public var hasWholeFile: Bool
    /// The index in place and its bytes; nil when there is none, or (beside a `manifest.json`)
    /// when it does not decode: the next build writes it again.
    public var index: ManifestIndex?
    public var indexBytes: [UInt8]?
    /// The bytes of `manifest.json`, kept beside an index that decodes: a build checks the parts
    /// that index names against them before it names one again (`ManifestSplit.PublishedParts`).
    public var wholeBytes: [UInt8]?

    /// Bytes of the file at a path relative to the publish's root; nil when there is none.
    public typealias Reader = (String) throws(ManifestError) -> [UInt8]?

    public static let wholeFileName = "manifest.json"

    /// The publish in `folder`, nil when it holds neither `manifest.json` nor an index. Its
    /// parts are read and decoded on `workers` threads.
    public static func read(folder: String, workers: Int = 1) throws(ManifestError) -> PublishedManifest? {
        let file: @Sendable (String) throws(ManifestError) -> [UInt8]? = { relative throws(ManifestError) in try readFile(folder + "/" + relative) }
        return try read(at: folder, reading: file) { index throws(ManifestError) in
            let parts = index.parts.parallelMap(workers: index.parts.count >= 8 ? workers : 1) { reference in
                Result { () throws(ManifestError) in try readPart(reference, index: index, at: folder, reading: file) }
            }
            return try parts.map { result throws(ManifestError) in try result.get() }
        }
    }

    /// The publish at `location` (a folder or a target, named in errors) through `reading`.
    public static func read(at location: String, reading: Reader) throws(ManifestError) -> PublishedManifest? {
        try read(at: location, reading: reading) { index throws(ManifestError) in try readParts(of: index, at: location, reading: reading) }
    }

    private static func read(
        at location: String, reading: Reader, parts readParts: (ManifestIndex) throws(ManifestError) -> [ManifestPart]
    ) throws(ManifestError) -> PublishedManifest? {
        let indexPath = location + "/" + ManifestIndex.fileName
        let indexBytes = try reading(ManifestIndex.fileName)
        if let whole = try reading(wholeFileName) {
            let manifest = try ManifestFile.decode(Data(whole), path: location + "/" + wholeFileName)
            let index = indexBytes.flatMap { try? ManifestFile.decodeIndex($0, path: indexPath) }
            return PublishedManifest(
                manifest: manifest, hasWholeFile: true, index: index, indexBytes: index == nil ? nil : indexBytes,
                wholeBytes: index == nil ? nil : whole)
        }
        guard let indexBytes else { return nil }
        let index = try ManifestFile.decodeIndex(indexBytes, path: indexPath)
        let parts = try readParts(index)
        return PublishedManifest(
            manifest: ManifestSplit.assemble(index, parts: parts), hasWholeFile: false, index: index, indexBytes: indexBytes)
    }

    /// The parts `index` names, in its order, each of the size and hash it gives and decoded.
    public static func readParts(of index: ManifestIndex, at location: String, reading: Reader) throws(ManifestError) -> [ManifestPart] {
        var parts: [ManifestPart] = []
        for reference in index.parts {
            parts.append(try readPart(reference, index: index, at: location, reading: reading))
        }
        return parts
    }

    /// One part, refused with the reason when it is missing, is not what the index names, or
    /// does not hold as many entries as the index says.
    public static func readPart(
        _ reference: PartReference, index: ManifestIndex, at location: String, reading: Reader
    ) throws(ManifestError) -> ManifestPart {
        guard CourseFile.isContentKey(reference.sha256) else {
            throw .invalid(path: location + "/" + ManifestIndex.fileName, reason: "names a part \"\(reference.sha256)\", which is not a SHA-256 name")
        }
        let path = location + "/" + reference.path
        guard let bytes = try reading(reference.path) else {
            throw .unreadable(path: path, reason: "missing; \(ManifestIndex.fileName) names it")
        }
        guard ManifestSplit.verify(bytes, as: reference) else {
            throw .invalid(
                path: path,
                reason: "is \(bytes.count) bytes with sha256 \(SHA256Hex.of(bytes)); \(ManifestIndex.fileName) names \(reference.size) bytes with sha256 \(reference.sha256)")
        }
        let part = try ManifestFile.decodePart(bytes, path: path)
        guard part.blocks.count == reference.blocks, part.outline.count == reference.containers else {
            throw .invalid(
                path: path,
                reason: "holds \(part.blocks.count) blocks and \(part.outline.count) outline entries; \(ManifestIndex.fileName) says \(reference.blocks) and \(reference.containers)")
        }
        return part
    }

    /// The bytes of a kept manifest or part, nil when there is none; refused unread when it is
    /// not a regular file or larger than `WholeFile.manifestLimit`.
    public static func readFile(_ path: String) throws(ManifestError) -> [UInt8]? {
        do {
            return try WholeFile.read(path, atMost: WholeFile.manifestLimit)
        } catch {
            throw .unreadable(path: path, reason: error.reason ?? "\(error)")
        }
    }
}
