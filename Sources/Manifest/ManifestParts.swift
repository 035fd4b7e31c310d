import FileSystem
import Foundation
import ParallelMap
import Synchronization

/// The manifest split for large courses: a small index (`manifest-index.json`, written last)
/// that names content-addressed parts (`manifest/<sha256>.json`, immutable), each holding a run
/// of the blocks or of the outline with the course files they list. A client that keeps the
/// parts it has read learns of a one-block edit from the index and the one part that changed,
/// whatever the course's size. Assembling the parts in the index's order gives the same
/// `CourseManifest` as `manifest.json`, which a build still writes while it fits the clients'
/// limit (for clients that read only it).
public struct ManifestIndex: Codable, Sendable, Equatable {
    public static let currentSchemaVersion = 3
    /// Beside `manifest.json`, relative to the publish's root.
    public static let fileName = "manifest-index.json"

    public var schemaVersion: Int
    public var courseID: String
    public var publishedAt: String
    public var generator: String
    public var runtime: RuntimeArchive?
    public var search: SearchArchive?
    /// The course files the runtime and the search index list (the blocks' are in the parts).
    public var files: [String: CourseFile]?
    /// In course order: block parts first, then outline parts.
    public var parts: [PartReference]

    public init(
        courseID: String, publishedAt: String, generator: String, runtime: RuntimeArchive?, search: SearchArchive?,
        files: [String: CourseFile]?, parts: [PartReference]
    ) {
        self.schemaVersion = Self.currentSchemaVersion
        self.courseID = courseID
        self.publishedAt = publishedAt
        self.generator = generator
        self.runtime = runtime
        self.search = search
        self.files = files
        self.parts = parts
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case courseID = "course_id"
        case publishedAt = "published_at"
        case generator, runtime, search, files, parts
    }
}

/// One part as the index names it.
public struct PartReference: Codable, Sendable, Equatable, Hashable {
    /// SHA-256 (hex) of the part file's bytes, which is also its name.
    public var sha256: String
    /// Bytes of the part file.
    public var size: UInt64
    /// How many block entries and outline entries it holds.
    public var blocks: Int
    public var containers: Int

    public init(sha256: String, size: UInt64, blocks: Int, containers: Int) {
        self.sha256 = sha256
        self.size = size
        self.blocks = blocks
        self.containers = containers
    }

    /// `manifest/<sha256>.json`, relative to the index. Derived, never read, so a hostile index
    /// cannot point a part anywhere else.
    public var path: String { ManifestPart.path(sha256: sha256) }
}

/// A run of blocks or of outline entries, with every course file those blocks list.
public struct ManifestPart: Codable, Sendable, Equatable {
    public static let folder = "manifest"
    public var blocks: [BlockEntry]
    public var outline: [OutlineEntry]
    public var files: [String: CourseFile]

    public init(blocks: [BlockEntry] = [], outline: [OutlineEntry] = [], files: [String: CourseFile] = [:]) {
        self.blocks = blocks
        self.outline = outline
        self.files = files
    }

    public static func path(sha256: String) -> String { "\(folder)/\(sha256).json" }
}

/// A manifest split into its index and parts, with each part's bytes as published.
public struct SplitManifest: Sendable {
    public var index: ManifestIndex
    /// In the index's order; `bytes` hash to `reference.sha256`.
    public var parts: [(reference: PartReference, bytes: [UInt8])]
}

/// Where parts begin and end. A run ends after an entry whose usage id hashes to a multiple
/// of `averageEntries` (so the boundaries move with the content, not with positions: inserting
/// a block changes only its own part), or once it holds `maximumEntries`.
public enum ManifestSplit {
    public static let averageEntries = 256
    public static let maximumEntries = 1024
    /// The most parts an index may name: 16 million entries at the average run length, while a
    /// hostile index of tiny parts could otherwise cost a client hundreds of thousands of
    /// requests and files within the byte limits.
    public static let maximumParts = 1 << 16

    /// The index and every part's bytes, in the index's order (for tests and tools; a build
    /// writes each part as it is made, `index(of:workers:reusing:publish:)`).
    public static func split(_ manifest: CourseManifest) -> SplitManifest {
        let made = Mutex<[String: [UInt8]]>([:])
        let result = index(of: manifest, workers: 1) { (reference, bytes) -> Never? in
            made.withLock { $0[reference.sha256] = bytes }
            return nil
        }
        let (index, _) = result.get()
        let bytes = made.withLock { $0 }
        return SplitManifest(index: index, parts: index.parts.map { ($0, bytes[$0.sha256] ?? []) })
    }

    /// The index of `manifest`, each of its parts made on `workers` threads and handed to
    /// `publish` (which returns why it could not keep it, or nil), so that no more than one part
    /// per worker is held: at 100,000 blocks the parts are a quarter of a gigabyte. Also the
    /// bytes the block entries of the parts made take: `manifest.json` holds the same entries,
    /// so without `reusing` that is a lower bound of its size.
    /// With `reusing`, the index of a manifest with the same usage ids in the same order that
    /// differs from this one only in the entries at `changed`: its block parts holding none of
    /// those, and its outline's parts, are named as they are, not made again (an interim
    /// manifest, whose staged entries name other paths). With `published`, the parts in place whose
    /// entries and files are this manifest's are named again, not made (so after a one-block
    /// edit, one part is made).
    public static func index<Failure: Error>(
        of manifest: CourseManifest, workers: Int, reusing base: (index: ManifestIndex, changed: Set<Int>)? = nil,
        published: PublishedParts? = nil, publish: @Sendable (_ reference: PartReference, _ bytes: [UInt8]) -> Failure?
    ) -> Result<(ManifestIndex, entryBytes: Int), Failure> {
        let outline = manifest.outline ?? []
        let budget = ManifestLimits.current.partBytesBudget
        let runs = runs(of: manifest.blocks.map(\.usageID), bounds: manifest.blocks.map(\.partBytesBound), budget: budget).map(Run.blocks)
            + runs(of: outline.map(\.usageID), bounds: outline.map(\.partBytesBound), budget: budget).map(Run.outline)
        let allFiles = manifest.files ?? [:]
        // Where each part of `base` starts among the blocks: a run is taken from it only where
        // it covers the same entries, wherever the two manifests' runs were cut.
        var starts: [Int] = []
        // The outline is the same in both: its parts are taken by where they start in it.
        var outlineParts: [Int: PartReference] = [:]
        if let base {
            var (start, container) = (0, 0)
            for reference in base.index.parts {
                starts.append(start)
                if reference.containers > 0, reference.blocks == 0 { outlineParts[container] = reference }
                start += reference.blocks
                container += reference.containers
            }
        }
        let (baseStarts, baseOutlineParts) = (starts, outlineParts)
        let made = runs.enumerated().map { $0 }.parallelMap(workers: runs.count >= 8 ? workers : 1) { (position, run) -> Result<(PartReference, Int), Failure> in
            var part = ManifestPart()
            switch run {
            case .blocks(let range):
                if let base, position < base.index.parts.count, base.index.parts[position].containers == 0,
                    baseStarts[position] == range.lowerBound, base.index.parts[position].blocks == range.count,
                    !range.contains(where: base.changed.contains)
                {
                    return .success((base.index.parts[position], 0))
                }
                // Compared in place before anything is copied: at 100,000 blocks, copying every
                // part's entries to find it unchanged was more than half a second of an edit.
                for position in range {
                    for sha256 in (manifest.blocks[position].files ?? [:]).values { part.files[sha256] = allFiles[sha256] }
                }
                if let published, let reference = published.blockPart(holding: manifest.blocks[range], files: part.files) {
                    if let entries = published.blockEntries[reference.sha256] { return .success((reference, entries.count)) }
                    // The entries without the part's other fields: still a lower bound.
                    let rest = CanonicalJSON.encode(ManifestPart(files: part.files)).count
                    return .success((reference, max(0, Int(reference.size) - rest)))
                }
                part.blocks = Array(manifest.blocks[range])
            case .outline(let range):
                if let reference = baseOutlineParts[range.lowerBound], reference.containers == range.count { return .success((reference, 0)) }
                part.outline = Array(outline[range])
                if let published, let reference = published.outlinePart(holding: part.outline) { return .success((reference, 0)) }
            }
            let (bytes, entryBytes) = CanonicalJSON.encodeMeasuring(part)
            let reference = PartReference(
                sha256: SHA256Hex.of(bytes), size: UInt64(bytes.count), blocks: part.blocks.count, containers: part.outline.count)
            if let failure = publish(reference, bytes) { return .failure(failure) }
            return .success((reference, entryBytes))
        }
        var references: [PartReference] = []
        var entryBytes = 0
        for result in made {
            switch result {
            case .success(let (reference, bytes)):
                references.append(reference)
                entryBytes += bytes
            case .failure(let failure):
                return .failure(failure)
            }
        }
        var indexFiles: [String: CourseFile] = [:]
        for shared in [manifest.runtime, manifest.search].compactMap({ $0 }) {
            for sha256 in (shared.files ?? [:]).values { indexFiles[sha256] = allFiles[sha256] }
        }
        let index = ManifestIndex(
            courseID: manifest.courseID, publishedAt: manifest.publishedAt, generator: manifest.generator,
            runtime: manifest.runtime, search: manifest.search, files: manifest.files == nil ? nil : indexFiles,
            parts: references)
        return .success((index, entryBytes))
    }

    /// The parts of a publish in place, by the usage id of their first entry, with what they
    /// hold. A part is named again only when it is known to be intact and to hold what the
    /// publish's manifest says: a publish read from its index and parts had each part checked
    /// against the size and hash the index names; beside a `manifest.json`, which is what was
    /// read, the block parts are read and checked to be exactly its blocks (`verifiedEntries`).
    public struct PublishedParts: Sendable {
        let manifest: CourseManifest
        let blockParts: [String: (reference: PartReference, start: Int)]
        let outlineParts: [String: (reference: PartReference, start: Int)]
        /// Each block part's entries as `manifest.json` holds them, by the part's hash: beside a
        /// `manifest.json`, so that the next one is made of them where a part is named again.
        public let blockEntries: [String: ArraySlice<UInt8>]

        /// `folder` holds the publish; its parts are read on `workers` threads.
        public init?(_ published: PublishedManifest, in folder: String, workers: Int = 1) {
            guard let index = published.index else { return nil }
            if published.hasWholeFile {
                guard let whole = published.wholeBytes,
                    let entries = Self.verifiedEntries(of: index, in: folder, workers: workers, whole: whole, decoded: published.manifest)
                else { return nil }
                blockEntries = entries
            } else {
                blockEntries = [:]
            }
            manifest = published.manifest
            let outline = manifest.outline ?? []
            var blockParts: [String: (PartReference, Int)] = [:]
            var outlineParts: [String: (PartReference, Int)] = [:]
            var (block, container) = (0, 0)
            for reference in index.parts {
                if reference.blocks > 0, block < manifest.blocks.count { blockParts[manifest.blocks[block].usageID] = (reference, block) }
                // Beside a `manifest.json` only the block parts were checked; the outline's few
                // parts are made again (and, holding the same bytes, not written).
                if reference.containers > 0, container < outline.count, !published.hasWholeFile {
                    outlineParts[outline[container].usageID] = (reference, container)
                }
                block += reference.blocks
                container += reference.containers
            }
            self.blockParts = blockParts
            self.outlineParts = outlineParts
        }

        /// The block entries of every block part `index` names in `folder`, by hash, when they are
        /// exactly the blocks of `whole` (the `manifest.json` beside it, which decoded as
        /// `decoded`): each part of the size and hash named, in this layout, holding as many
        /// entries as named, and the blocks array of `whole` those runs, byte for byte. Nil
        /// otherwise: a build that stopped between writing `manifest.json` and the index left an
        /// index naming the parts of the manifest before, and a hand-edited folder anything.
        static func verifiedEntries(
            of index: ManifestIndex, in folder: String, workers: Int, whole: [UInt8], decoded: CourseManifest
        ) -> [String: ArraySlice<UInt8>]? {
            let references = index.parts.filter { $0.blocks > 0 }
            guard index.parts.allSatisfy({ $0.blocks == 0 || $0.containers == 0 }) else { return nil }
            let read = references.parallelMap(workers: references.count >= 8 ? workers : 1) { reference -> ArraySlice<UInt8>? in
                guard CourseFile.isContentKey(reference.sha256),
                    let bytes = try? PublishedManifest.readFile(folder + "/" + reference.path), verify(bytes, as: reference),
                    let (range, count) = CanonicalJSON.countedBlockEntries(inPart: bytes), count == reference.blocks
                else { return nil }
                return bytes[range]
            }
            var runs: [ArraySlice<UInt8>] = []
            for run in read {
                guard let run else { return nil }
                runs.append(run)
            }
            // The rest of `whole` is what decoded as the manifest's other fields.
            guard runs.isEmpty ? decoded.blocks.isEmpty : CanonicalJSON.blocksArray(of: whole, isMadeOf: runs) else { return nil }
            var entries: [String: ArraySlice<UInt8>] = [:]
            for (reference, run) in zip(references, runs) { entries[reference.sha256] = run }
            return entries
        }

        /// The part in place holding exactly these entries and course files.
        func blockPart(holding entries: ArraySlice<BlockEntry>, files: [String: CourseFile]) -> PartReference? {
            guard let first = entries.first?.usageID, let (reference, start) = blockParts[first], reference.blocks == entries.count,
                reference.containers == 0, start + entries.count <= manifest.blocks.count
            else { return nil }
            // By index, each pair compared where it is: an iterator hands out copies.
            for offset in 0..<entries.count where manifest.blocks[start + offset] != entries[entries.startIndex + offset] { return nil }
            guard files.allSatisfy({ manifest.files?[$0.key] == $0.value }) else { return nil }
            return reference
        }

        func outlinePart(holding entries: [OutlineEntry]) -> PartReference? {
            let outline = manifest.outline ?? []
            guard let first = entries.first, let (reference, start) = outlineParts[first.usageID], reference.containers == entries.count,
                reference.blocks == 0, start + entries.count <= outline.count, outline[start..<(start + entries.count)].elementsEqual(entries)
            else { return nil }
            return reference
        }
    }

    /// The manifest the index and its parts (in the index's order) describe. The caller has
    /// checked each part against its reference (`verify`).
    public static func assemble(_ index: ManifestIndex, parts: [ManifestPart]) -> CourseManifest {
        var manifest = CourseManifest(
            courseID: index.courseID, publishedAt: index.publishedAt, generator: index.generator,
            blocks: parts.flatMap(\.blocks), runtime: index.runtime)
        manifest.search = index.search
        let outline = parts.flatMap(\.outline)
        manifest.outline = outline.isEmpty && index.parts.allSatisfy({ $0.containers == 0 }) && parts.isEmpty ? nil : outline
        if let indexFiles = index.files {
            var files = indexFiles
            for part in parts { files.merge(part.files) { first, _ in first } }
            manifest.files = files
        }
        return manifest
    }

    /// Whether `bytes` are the part `reference` names: its size and hash.
    public static func verify(_ bytes: [UInt8], as reference: PartReference) -> Bool {
        UInt64(bytes.count) == reference.size && SHA256Hex.of(bytes) == reference.sha256
    }

    /// A run of the manifest's blocks or of its outline.
    enum Run: Sendable {
        case blocks(Range<Int>)
        case outline(Range<Int>)
    }

    /// Index ranges of the runs `ids` (usage ids in course order) split into.
    /// A part's entries may take at most `budget` bytes by their bounds (`partBytesBound`), by
    /// default a quarter of what a client accepts (`ManifestLimits.partBytesBudget`): a run is
    /// cut before an entry that would take it past this. An ordinary entry's bound is about
    /// 10 KB, so only entries that list tens of thousands of files cut a run by their size; a
    /// block whose page listed 50,000 files once made a part of 76 MB, which every client
    /// refused.

    /// `bounds`: each entry's `partBytesBound`, in the order of `ids`.
    public static func runs(of ids: [String], bounds: [Int]? = nil, budget: Int = ManifestLimits.current.partBytesBudget) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start = 0
        var bytes = 0
        for (position, id) in ids.enumerated() {
            let bound = bounds.map { $0[position] } ?? 0
            if position > start, bytes + bound > budget {
                result.append(start..<position)
                start = position
                bytes = 0
            }
            bytes += bound
            let length = position - start + 1
            if length >= maximumEntries || endsRun(id) {
                result.append(start..<(position + 1))
                start = position + 1
                bytes = 0
            }
        }
        if start < ids.count { result.append(start..<ids.count) }
        return result
    }

    static func endsRun(_ usageID: String) -> Bool {
        let value = UInt32(SHA256Hex.of(Array(usageID.utf8)).prefix(8), radix: 16) ?? 1
        return value % UInt32(averageEntries) == 0
    }
}

extension BlockEntry {
    /// More than the bytes this entry adds to a part, whatever its text: its JSON with every
    /// byte of text counted as the six of a `\u` escape, and an entry of the part's `files` for
    /// each content it lists. The archive path and download URL are counted at their longest
    /// (a staged path is longer), so that an interim manifest's runs are cut as the final's.
    public var partBytesBound: Int {
        func text(_ string: String?) -> Int { 6 * (string?.utf8.count ?? 0) + 16 }
        var bytes = 2_048 + text(usageID) + text(type) + text(displayName) + text(sha256) + text(contentHash) + text(lastModified)
        // The archive path twice (as itself and at the end of the download URL), at its
        // longest, and the URL's prefix (the same for a staged path).
        let prefix = max(0, (offlineDownload?.fileURL.utf8.count ?? 0) - (archive?.utf8.count ?? 0))
        bytes += text(reason) + text(runtime) + 2 * (6 * ArchivePath.longestStagedPath + 16) + 6 * prefix
        for parent in parents { bytes += text(parent) }
        for need in requiresNetwork ?? [] { bytes += text(need) }
        for (partition, groups) in groupAccess ?? [:] { bytes += text(partition) + 24 * groups.count }
        if let splitTest { bytes += text(splitTest.usageID) + 64 }
        for (path, _) in files ?? [:] { bytes += text(path) + 64 + 16 + 256 }
        return bytes
    }
}

extension OutlineEntry {
    /// More than the bytes this entry adds to a part, as `BlockEntry.partBytesBound` counts them.
    public var partBytesBound: Int {
        func text(_ string: String?) -> Int { 6 * (string?.utf8.count ?? 0) + 16 }
        return children.reduce(1_024 + text(usageID) + text(type) + text(displayName)) { $0 + text($1) }
    }
}
