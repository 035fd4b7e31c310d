import Foundation
import FileSystem

/// Reading and writing `manifest.json`.
public enum ManifestFile {
    /// Sorted keys and fixed formatting: identical manifests are identical bytes.
    public static func encode(_ manifest: CourseManifest) -> Data {
        Data(CanonicalJSON.encode(manifest))
    }

    /// `manifest.json` with its blocks array made of runs of entries as parts hold them
    /// (`blockEntries(inPart:)`, of parts holding the manifest's blocks in order): the bytes
    /// `encode` makes, without encoding each entry again.
    public static func encode(_ manifest: CourseManifest, blockEntries: [ArraySlice<UInt8>]) -> [UInt8] {
        CanonicalJSON.encode(manifest, blockEntries: blockEntries)
    }

    /// Where a part's block entries lie in its bytes, as `manifest.json` would hold them; nil
    /// when it holds none or was not written in this layout.
    public static func blockEntries(inPart bytes: [UInt8]) -> Range<Int>? {
        CanonicalJSON.blockEntries(inPart: bytes)
    }

    public static func decode(_ data: Data, path: String) throws(ManifestError) -> CourseManifest {
        // The fast reader takes every manifest this program writes; anything else, and every
        // error, is the generic decoder's.
        if let manifest = ManifestReader.manifest([UInt8](data)), manifest.schemaVersion <= CourseManifest.currentSchemaVersion {
            return manifest
        }
        struct Version: Decodable {
            let schemaVersion: Int?
            enum CodingKeys: String, CodingKey { case schemaVersion = "schema_version" }
        }
        let version: Version
        do {
            version = try JSONDecoder().decode(Version.self, from: data)
        } catch {
            throw .invalid(path: path, reason: "not a JSON object with a schema_version")
        }
        guard let number = version.schemaVersion else { throw .invalid(path: path, reason: "schema_version is missing") }
        guard number <= CourseManifest.currentSchemaVersion else { throw .newerSchema(path: path, version: number) }
        return try genericDecode(CourseManifest.self, data, path: path)
    }

    /// Nil when there is no file at `path`.
    public static func read(_ path: String) throws(ManifestError) -> CourseManifest? {
        guard let bytes = try PublishedManifest.readFile(path) else { return nil }
        return try decode(Data(bytes), path: path)
    }

    /// The manifest at `path` without its blocks (`blocks` empty), for a reader that needs only
    /// the rest (the course id, the search index, the runtime, the outline): the blocks are not
    /// decoded, so a manifest of 92,000 blocks costs its bytes, not a gigabyte. A manifest the
    /// fast reader does not take is decoded whole, with its errors, and its blocks dropped.
    public static func readWithoutBlocks(_ path: String) throws(ManifestError) -> CourseManifest? {
        guard let bytes = try PublishedManifest.readFile(path) else { return nil }
        if let manifest = ManifestReader.manifestWithoutBlocks(bytes), manifest.schemaVersion <= CourseManifest.currentSchemaVersion {
            return manifest
        }
        var manifest = try decode(Data(bytes), path: path)
        manifest.blocks = []
        return manifest
    }

    /// Replaces `path` atomically and durably: readers see the old manifest or the new one,
    /// never a mix, and after a power cut the disk holds one of the two (the new file is
    /// synced before the rename, its folder after). Callers sync every archive it names first.
    /// Returns the bytes written.
    @discardableResult
    public static func write(_ manifest: CourseManifest, to path: String) throws(ManifestError) -> [UInt8] {
        let bytes = CanonicalJSON.encode(manifest)
        do {
            try DurableFile.replace(path, with: bytes)
        } catch {
            throw .unwritable(path: path, reason: "\(error)")
        }
        return bytes
    }

    public static func encode(_ part: ManifestPart) -> [UInt8] { CanonicalJSON.encode(part) }
    public static func encode(_ index: ManifestIndex) -> [UInt8] { CanonicalJSON.encode(index) }

    /// A part of a split manifest from untrusted bytes; the caller checks them against the
    /// index's reference first (`ManifestSplit.verify`).
    public static func decodePart(_ data: [UInt8], path: String) throws(ManifestError) -> ManifestPart {
        if let part = ManifestReader.part(data) { return part }
        return try genericDecode(ManifestPart.self, Data(data), path: path)
    }

    /// A split manifest's index from untrusted bytes.
    public static func decodeIndex(_ data: [UInt8], path: String) throws(ManifestError) -> ManifestIndex {
        if let index = ManifestReader.index(data), index.schemaVersion <= ManifestIndex.currentSchemaVersion { return index }
        let index = try genericDecode(ManifestIndex.self, Data(data), path: path)
        guard index.schemaVersion <= ManifestIndex.currentSchemaVersion else {
            throw .newerSchema(path: path, version: index.schemaVersion)
        }
        return index
    }

    static func genericDecode<T: Decodable>(_ type: T.Type, _ data: Data, path: String) throws(ManifestError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw .invalid(path: path, reason: "missing \(key.stringValue) at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .invalid(path: path, reason: "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw .invalid(path: path, reason: "\(error)")
        }
    }
}
