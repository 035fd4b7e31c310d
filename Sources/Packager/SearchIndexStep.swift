import BlockRenderer
import CourseExport
import CourseSearch
import Crypto
import FileSystem
import Foundation
import Manifest
import ParallelMap
import ZipArchive
import ZlibStream

/// The build's search step: the learner-visible text of every leaf block that the manifest
/// lists (html text, problem questions, video transcripts), with its display name and outline
/// path, into one deterministic `search/<hash>.zip` beside the block archives: a small
/// `index.js` naming the part files that hold the documents (`SearchIndex`). Parts end at
/// document boundaries that follow the documents, not their offsets, so an edit to one page
/// changes one part (two when it moves a boundary), and a client downloads that part and
/// `index.js`, not the whole index. The archive's name is the hash of `index.js`, which names
/// every part by its hash. A rebuild takes the text of unchanged blocks from `SearchTexts` and
/// the deflated bytes of unchanged parts from `DeflatedChunks`.
struct SearchIndexStep: Sendable {
    let contentHash: String
    /// `index.js` and the parts, in order, as the archive and the course files hold them; let
    /// go once published.
    var files: [SharedContent.File]
    /// What the next build may reuse, and whether it differs from what this one started with
    /// (of the texts, only the shards to write again).
    let texts: SearchTexts
    let chunks: DeflatedChunks
    /// The `SearchTexts` shards to write again.
    let changedTexts: Set<Int>
    let chunksChanged: Bool
    let parts: SearchParts
    let partsChanged: Bool

    /// Bumped when what is taken from a block changes (`SearchIndex.textVersion`): the text of
    /// unchanged blocks is then extracted again, and an unchanged build (which stops before
    /// this step) still notices through the build's fingerprint.
    static let textVersion = 1
    static var fingerprint: String { "search-\(SearchIndex.formatVersion)-\(textVersion)" }

    /// A part ends after a document whose usage id hashes to a multiple of `boundaryEvery`
    /// once the part holds `minimumChunk` bytes (at the latest at `maximumChunk`): boundaries
    /// follow the documents, not their offsets, so a page that grows or a block added moves no
    /// boundary but its neighbours'.
    static let minimumChunk = 64 << 10
    static let maximumChunk = 2 << 20
    static let boundaryEvery: UInt64 = 8

    /// `cachedTexts`, `cachedChunks` and `cachedParts`: what the previous build of this output
    /// left in the state folder (the parts deflated at the level the archive is written at). A
    /// block whose `content_hash` is unchanged shows the same page, so its text is taken from
    /// there; its name and path are always taken anew. A part whose documents all have the
    /// fingerprints of a part the last build made is that part again: it is neither encoded,
    /// hashed nor deflated.
    init(
        course: Course, export: ExportDirectory, renderer: BlockRenderer, entries: [BlockEntry],
        cachedTexts: SearchTextCache, cachedChunks: DeflatedChunks, cachedParts: SearchParts, workers: Int
    ) throws(ZlibError) {
        let sources = DocumentSources(course: course, export: export, renderer: renderer, cachedTexts: cachedTexts)
        if let step = try Self.make(entries: entries, sources: sources, cachedChunks: cachedChunks, cachedParts: cachedParts, workers: workers) {
            self = step
            return
        }
        // A recorded length that is not the document's: the records are not trusted, and the
        // index is cut from the documents themselves, as a first build cuts it.
        let unrecorded = SearchParts(scope: cachedParts.scope)
        guard let step = try Self.make(entries: entries, sources: sources, cachedChunks: cachedChunks, cachedParts: unrecorded, workers: workers)
        else { preconditionFailure("a search document's encodedCount is not the length append writes") }
        self = step
    }

    private init(
        contentHash: String, files: [SharedContent.File], texts: SearchTexts, chunks: DeflatedChunks, changedTexts: Set<Int>,
        chunksChanged: Bool, parts: SearchParts, partsChanged: Bool
    ) {
        self.contentHash = contentHash
        self.files = files
        self.texts = texts
        self.chunks = chunks
        self.changedTexts = changedTexts
        self.chunksChanged = chunksChanged
        self.parts = parts
        self.partsChanged = partsChanged
    }

    /// What a block's document is made from, besides its entry.
    private struct DocumentSources: Sendable {
        let course: Course
        let export: ExportDirectory
        let renderer: BlockRenderer
        let cachedTexts: SearchTextCache
        let tokenizer: SearchTokenizer
        // Positions, not copies: at 100,000 blocks a table of `Block` values and a second
        // array of entries were a tenth of a gigabyte.
        let blocks: CourseBlocks

        init(course: Course, export: ExportDirectory, renderer: BlockRenderer, cachedTexts: SearchTextCache) {
            self.course = course
            self.export = export
            self.renderer = renderer
            self.cachedTexts = cachedTexts
            tokenizer = SearchTokenizer(language: course.language)
            blocks = CourseBlocks(course.blocks)
        }
    }

    /// One listed block as the parts are cut: its fingerprint, the length of its encoded
    /// document (0 when it has none), and the document itself once it is made.
    private struct Planned: Sendable {
        let entry: Int
        let title: String
        let path: [String]
        let page: String?
        let fingerprint: [UInt8]?
        let length: Int
        var document: (EncodedSearchDocument, extracted: Bool)?
    }

    /// A part made or found again, with the documents made for it.
    private struct MadePart: Sendable {
        let sha256: String
        let key: [UInt8]
        let chunk: DeflatedChunks.Chunk
        let entry: PreparedEntry
        let fingerprint: [UInt8]?
        let documents: [(Int, (EncodedSearchDocument, extracted: Bool))]
    }

    /// Nil when a length `cachedParts` gives is not that of the document it names.
    private static func make(
        entries: [BlockEntry], sources: DocumentSources, cachedChunks: DeflatedChunks, cachedParts: SearchParts, workers: Int
    ) throws(ZlibError) -> SearchIndexStep? {
        let course = sources.course
        let listed = entries.indices.filter { sources.blocks[entries[$0].usageID] != nil }
        let planned = listed.parallelMap(workers: workers) { position in
            Self.plan(entries[position], at: position, sources: sources, lengths: cachedParts.lengths)
        }
        let present = planned.indices.filter { planned[$0].length > 0 }
        let cuts = Self.cut(lengths: present.lazy.map { planned[$0].length }) {
            Self.hash(entries[planned[present[$0]].entry].usageID) % boundaryEvery == 0
        }

        // Each part is encoded and deflated (or its deflated piece taken from the cache) by the
        // worker that takes it, and only its compressed form is kept: at 100,000 pages the raw
        // parts alone were a fifth of a gigabyte, held beside their compressed copy. The workers
        // take parts as they finish one, without waiting for each other: in batches, each
        // batch's slowest part kept the other core idle.
        let known = cachedChunks.chunks
        let results = cuts.parallelMap(workers: workers) { range in
            Result { () throws(ZlibError) -> MadePart? in
                try Self.part(
                    of: present[range], planned: planned, entries: entries, sources: sources, known: known,
                    parts: cachedParts.parts, level: cachedChunks.level)
            }
        }
        var made: [MadePart] = []
        made.reserveCapacity(cuts.count)
        for result in results {
            guard let part = try result.get() else { return nil }
            made.append(part)
        }
        var documented = planned
        for part in made {
            for (index, document) in part.documents { documented[index].document = document }
        }

        var used = DeflatedChunks(level: cachedChunks.level)
        var parts = SearchParts(scope: cachedParts.scope)
        parts.reserveCapacity(documented.count)
        for piece in made {
            used.chunks[piece.key] = piece.chunk
            if let fingerprint = piece.fingerprint { parts.parts[fingerprint] = SearchParts.Part(sha256: piece.sha256, chunkKey: piece.key) }
        }
        for block in documented {
            if let fingerprint = block.fingerprint { parts.record(fingerprint, length: block.length) }
        }
        let (texts, changedTexts) = Self.texts(of: documented, entries: entries, sources: sources, workers: workers)

        let names = made.map { SearchIndex.partName(sha256: $0.sha256) }
        let root = SearchIndex.root(courseID: course.id, language: course.language, textVersion: Self.textVersion, parts: names)
        let contentHash = SHA256Hex.of(root)
        var files = [SharedContent.File(name: SearchIndex.fileName, sha256: contentHash, content: .bytes(root))]
        for (name, piece) in zip(names, made) {
            files.append(SharedContent.File(name: name, sha256: piece.sha256, content: .prepared(piece.entry)))
        }
        return SearchIndexStep(
            contentHash: contentHash, files: files, texts: texts, chunks: used,
            changedTexts: changedTexts,
            chunksChanged: used.chunks.count != known.count || made.contains { known[$0.key] == nil },
            parts: parts, partsChanged: parts.differs(from: cachedParts))
    }

    /// A listed block's fingerprint and length: recorded by the last build, or found by making
    /// its document now.
    private static func plan(_ entry: BlockEntry, at position: Int, sources: DocumentSources, lengths: [[UInt8]: Int]) -> Planned {
        let blocks = sources.blocks
        // Containers above the block, outermost first, without the course itself. Read in
        // place: a copy of each `Block` retains and releases its dozen fields.
        let path = blocks.positions[entry.usageID].map { position in
            blocks.blocks[position].parents.reversed().compactMap { id -> String? in
                guard let parent = blocks.positions[id], blocks.blocks[parent].type != "course" else { return nil }
                return blocks.blocks[parent].displayName
            }
        } ?? []
        let title = entry.displayName ?? ""
        let page = entry.isOffline ? entry.archive.map { String($0.dropLast(".zip".count)) + "/index.html" } : nil
        let fingerprint = SearchParts.fingerprint(of: entry, title: title, path: path, page: page)
        if let fingerprint, let length = lengths[fingerprint] {
            return Planned(entry: position, title: title, path: path, page: page, fingerprint: fingerprint, length: length)
        }
        let document = Self.document(of: entry, title: title, path: path, page: page, sources: sources)
        return Planned(
            entry: position, title: title, path: path, page: page, fingerprint: fingerprint,
            length: document.map(\.0.encodedCount) ?? 0, document: document)
    }

    /// The part holding the documents of `members` (positions in `planned`): the last build's
    /// when their fingerprints are those of one it made and its deflated piece is at hand;
    /// otherwise encoded and deflated (or its piece found by its bytes). Nil when a document
    /// made here is not of the length its record gave.
    private static func part(
        of members: ArraySlice<Int>, planned: [Planned], entries: [BlockEntry], sources: DocumentSources,
        known: [[UInt8]: DeflatedChunks.Chunk], parts: [[UInt8]: SearchParts.Part], level: Int32
    ) throws(ZlibError) -> MadePart? {
        let fingerprints = members.compactMap { planned[$0].fingerprint }
        let fingerprint = fingerprints.count == members.count ? SearchParts.partKey(of: fingerprints) : nil
        let length = members.reduce(SearchIndex.partOpening.count + SearchIndex.partClosing.count + max(0, members.count - 1)) {
            $0 + planned[$1].length
        }
        if let fingerprint, let found = parts[fingerprint], let chunk = known[found.chunkKey], chunk.length == length,
            Self.isDeflated(chunk)
        {
            return Self.made(sha256: found.sha256, key: found.chunkKey, chunk: chunk, bytes: [], fingerprint: fingerprint, documents: [])
        }
        var bytes = SearchIndex.partOpening
        bytes.reserveCapacity(length)
        var documents: [(Int, (EncodedSearchDocument, extracted: Bool))] = []
        for (count, index) in members.enumerated() {
            let block = planned[index]
            guard let document = block.document
                ?? Self.document(of: entries[block.entry], title: block.title, path: block.path, page: block.page, sources: sources)
            else { return nil }
            if block.document == nil { documents.append((index, document)) }
            if count > 0 { bytes.append(UInt8(ascii: ",")) }
            let before = bytes.count
            document.0.append(to: &bytes)
            guard bytes.count - before == block.length else { return nil }
        }
        bytes += SearchIndex.partClosing
        let key = DeflatedChunks.key(of: bytes)
        let chunk: DeflatedChunks.Chunk
        if let cached = known[key], cached.length == bytes.count {
            chunk = cached
        } else {
            chunk = try DeflatedChunks.deflate(bytes, level: level)
        }
        return Self.made(sha256: SHA256Hex.of(bytes), key: key, chunk: chunk, bytes: bytes, fingerprint: fingerprint, documents: documents)
    }

    private static func made(
        sha256: String, key: [UInt8], chunk: DeflatedChunks.Chunk, bytes: [UInt8], fingerprint: [UInt8]?,
        documents: [(Int, (EncodedSearchDocument, extracted: Bool))]
    ) -> MadePart {
        let entry = Self.entry(of: bytes, deflated: chunk)
        // What the cache keeps is the entry's own bytes, less the final block.
        let kept = entry.method == .deflated
            ? DeflatedChunks.Chunk(crc32: chunk.crc32, length: chunk.length, deflated: entry.payload.dropLast(DeflatedChunks.finalBlock.count))
            : chunk
        return MadePart(sha256: sha256, key: key, chunk: kept, entry: entry, fingerprint: fingerprint, documents: documents)
    }

    /// The search document of one listed block, and whether its text was extracted anew (not
    /// taken from `cachedTexts`); nil for a block with neither name nor text.
    private static func document(
        of entry: BlockEntry, title: String, path: [String], page: String?, sources: DocumentSources
    ) -> (EncodedSearchDocument, extracted: Bool)? {
        guard let position = sources.blocks.positions[entry.usageID] else { return nil }
        let tokenizer = sources.tokenizer
        if let known = sources.cachedTexts.text(of: entry.usageID, contentHash: entry.contentHash, offline: entry.isOffline) {
            // As a fresh build decides it: a block with neither name nor text is left out.
            guard !title.isEmpty || known.text.count > 2 else { return nil }
            return (EncodedSearchDocument(
                usageID: entry.usageID, type: entry.type, title: title, path: path, page: page,
                textLiteral: known.text, bodyTermsLiteral: known.bodyTerms, tokenizer: tokenizer), false)
        }
        var text = ""
        if entry.isOffline {
            switch sources.renderer.learnerText(of: sources.blocks.blocks[position], in: sources.course, export: sources.export) {
            case .html(let html): text = VisibleText.of(html: html)
            case .plain(let plain): text = VisibleText.collapsingWhitespace(plain)
            case nil: break
            }
        }
        guard !title.isEmpty || !text.isEmpty else { return nil }
        let document = SearchDocument(usageID: entry.usageID, type: entry.type, title: title, path: path, page: page, text: text, tokenizer: tokenizer)
        return (EncodedSearchDocument(document), true)
    }

    /// The `SearchTexts` shards that differ from what the last build left, and the records of
    /// those shards (the others stay as they are in the state folder): a shard differs when a
    /// block in it had its text extracted anew, or when the records it should hold (every block
    /// of it with a document, by usage id, content hash and offline flag) are not those its file
    /// was written with, which its first bytes tell. Only the changed shards are read whole, and
    /// only their records gathered: at 100,000 blocks, a table of every record built anew for
    /// each edit took a third of a second.
    private static func texts(
        of planned: [Planned], entries: [BlockEntry], sources: DocumentSources, workers: Int
    ) -> (SearchTexts, changed: Set<Int>) {
        let shards = Int(SearchTexts.shardCount)
        let cache = sources.cachedTexts
        var changed = Set<Int>()
        // Positions in `planned` by shard, fields read in place: a copy of each entry retains
        // and releases a dozen of them, and a table per shard grew 100,000 times.
        var members = [[Int]](repeating: [], count: shards)
        for index in planned.indices where planned[index].length > 0 {
            let position = planned[index].entry
            guard entries[position].contentHash != nil else { continue }
            let shard = SearchTexts.shard(of: entries[position].usageID)
            if planned[index].document?.extracted == true { changed.insert(shard) }
            members[shard].append(index)
        }
        for shard in 0..<shards where !changed.contains(shard) {
            let digest = cache.keysDigest(ofShard: shard)
            // No file and nothing to hold: nothing to write.
            if digest == nil, members[shard].isEmpty { continue }
            let keys = members[shard].map { index in
                let position = planned[index].entry
                return SearchTexts.Key(usageID: entries[position].usageID, contentHash: entries[position].contentHash ?? "", offline: entries[position].isOffline)
            }
            if digest != SearchTexts.keysDigest(of: keys) { changed.insert(shard) }
        }
        return (Self.records(of: planned, entries: entries, sources: sources, in: changed, workers: workers), changed)
    }

    /// The records of the blocks in `shards`: every block there with a document, so that a
    /// shard written holds what the next build expects of it. A block whose part was found
    /// again has no document made; its text is taken from its shard or, where the shard lost it
    /// (a first build of this format, a damaged file), extracted again, on `workers` threads.
    private static func records(
        of planned: [Planned], entries: [BlockEntry], sources: DocumentSources, in shards: Set<Int>, workers: Int
    ) -> SearchTexts {
        var texts = SearchTexts(textVersion: textVersion, language: sources.course.language)
        if shards.isEmpty { return texts }
        let members = planned.indices.filter { index in
            let position = planned[index].entry
            return planned[index].length > 0 && entries[position].contentHash != nil && shards.contains(SearchTexts.shard(of: entries[position].usageID))
        }
        let made = members.parallelMap(workers: members.count >= 64 ? workers : 1) { index -> SearchTexts.Text? in
            let block = planned[index]
            let entry = entries[block.entry]
            guard let contentHash = entry.contentHash,
                let (document, _) = block.document ?? Self.document(of: entry, title: block.title, path: block.path, page: block.page, sources: sources)
            else { return nil }
            return SearchTexts.Text(contentHash: contentHash, offline: entry.isOffline, text: document.textLiteral, bodyTerms: document.bodyTermsLiteral)
        }
        for (index, text) in zip(members, made) {
            if let text { texts.texts[entries[planned[index].entry].usageID] = text }
        }
        return texts
    }

    /// The parts, as ranges of the documents (by their encoded `lengths`, in order): a part
    /// ends after a document for which `isBoundary` holds once it holds `minimumChunk` bytes,
    /// or after the one that takes it to `maximumChunk`, each run between
    /// `SearchIndex.partOpening` and `partClosing`, commas between documents. A course with no
    /// document has one empty part.
    static func cut(lengths: some Sequence<Int>, isBoundary: (Int) -> Bool) -> [Range<Int>] {
        var cuts: [Range<Int>] = []
        var start = 0
        var size = SearchIndex.partOpening.count
        var index = 0
        for length in lengths {
            if index > start { size += 1 }
            size += length
            index += 1
            if size >= maximumChunk || (size >= minimumChunk && isBoundary(index - 1)) {
                cuts.append(start..<index)
                start = index
                size = SearchIndex.partOpening.count
            }
        }
        if index > start || cuts.isEmpty { cuts.append(start..<index) }
        return cuts
    }

    /// 64-bit FNV-1a: stable across runs and platforms, unlike `Hasher`.
    static func hash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    /// A part's entry: its deflated bytes ended by an empty final block, or the bytes
    /// themselves when deflating does not make them smaller (as `ZipWriter.prepare` decides).
    private static func entry(of part: [UInt8], deflated chunk: DeflatedChunks.Chunk) -> PreparedEntry {
        guard isDeflated(chunk) else {
            return PreparedEntry(method: .stored, crc32: chunk.crc32, uncompressedSize: UInt64(chunk.length), payload: part)
        }
        var payload: [UInt8] = []
        payload.reserveCapacity(chunk.deflated.count + DeflatedChunks.finalBlock.count)
        payload += chunk.deflated
        payload += DeflatedChunks.finalBlock
        return PreparedEntry(method: .deflated, crc32: chunk.crc32, uncompressedSize: UInt64(chunk.length), payload: payload)
    }

    /// Whether a part is published as its deflated bytes (not stored: deflate did not make it smaller).
    private static func isDeflated(_ chunk: DeflatedChunks.Chunk) -> Bool {
        chunk.deflated.count + DeflatedChunks.finalBlock.count < chunk.length
    }

    /// The texts, deflated pieces and cuts the next build of the same output reuses, in the
    /// state folder.
    func saveCaches(to stateFolder: String) {
        texts.save(shards: changedTexts, to: stateFolder)
        if chunksChanged { chunks.save(to: stateFolder) }
        if partsChanged { parts.save(to: stateFolder) }
    }

    /// What the device keeps once: `index.js` (its content hash is its SHA-256) and the parts,
    /// whose published files reuse the deflated parts as they are.
    var shared: SharedContent {
        SharedContent(kind: .search, contentHash: contentHash, files: files)
    }
}

/// The course's blocks by usage id, as positions in `course.blocks` (the first of a repeated id).
struct CourseBlocks: Sendable {
    let blocks: [Block]
    let positions: [String: Int]

    init(_ blocks: [Block]) {
        self.blocks = blocks
        positions = Dictionary(blocks.indices.map { (blocks[$0].usageID, $0) }, uniquingKeysWith: { first, _ in first })
    }

    subscript(usageID: String) -> Block? { positions[usageID].map { blocks[$0] } }
}
