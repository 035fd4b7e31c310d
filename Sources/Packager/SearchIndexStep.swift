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
    /// What the next build may reuse, and whether it differs from what this one started with.
    let texts: SearchTexts
    let chunks: DeflatedChunks
    /// The `SearchTexts` shards to write again.
    let changedTexts: Set<Int>
    let chunksChanged: Bool

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

    /// `cachedTexts` and `cachedChunks`: what the previous build of this output left in the
    /// state folder (the parts deflated at the level the archive is written at). A block whose
    /// `content_hash` is unchanged shows the same page, so its text is taken from there; its
    /// name and path are always taken anew.
    init(
        course: Course, export: ExportDirectory, renderer: BlockRenderer, entries: [BlockEntry],
        cachedTexts: SearchTexts, cachedChunks: DeflatedChunks, workers: Int
    ) throws(ZlibError) {
        let tokenizer = SearchTokenizer(language: course.language)
        // Positions, not copies: at 100,000 blocks a table of `Block` values and a second
        // array of entries were a tenth of a gigabyte.
        let blocks = CourseBlocks(course.blocks)
        let listed = entries.indices.filter { blocks[entries[$0].usageID] != nil }
        let documents = listed.parallelMap(workers: workers) { position in
            Self.document(
                of: entries[position], blocks: blocks, course: course, export: export, renderer: renderer, cachedTexts: cachedTexts,
                tokenizer: tokenizer)
        }
        let (texts, extracted) = Self.texts(of: zip(listed.lazy.map { entries[$0] }, documents), language: course.language)

        // Each part is deflated (or its deflated piece taken from the cache) as soon as it is
        // cut, a few at a time on all workers, and only its compressed form is kept: at 100,000
        // pages the raw parts alone were a fifth of a gigabyte, held beside their compressed copy.
        let known = cachedChunks.chunks
        var made: [(sha256: String, key: [UInt8], chunk: DeflatedChunks.Chunk, entry: PreparedEntry)] = []
        var pending: [[UInt8]] = []
        func flush() throws(ZlibError) {
            let results = pending.parallelMap(workers: workers) { part in
                Result { () throws(ZlibError) in
                    let key = DeflatedChunks.key(of: part)
                    let chunk: DeflatedChunks.Chunk
                    if let cached = known[key], cached.length == part.count {
                        chunk = cached
                    } else {
                        chunk = try DeflatedChunks.deflate(part, level: cachedChunks.level)
                    }
                    let entry = Self.entry(of: part, deflated: chunk)
                    // What the cache keeps is the entry's own bytes, less the final block.
                    let kept = entry.method == .deflated
                        ? DeflatedChunks.Chunk(crc32: chunk.crc32, length: chunk.length, deflated: entry.payload.dropLast(DeflatedChunks.finalBlock.count))
                        : chunk
                    return (SHA256Hex.of(part), key, kept, entry)
                }
            }
            pending.removeAll()
            for result in results { made.append(try result.get()) }
        }
        for part in Self.parts(of: documents.lazy.compactMap { $0?.0 }) {
            pending.append(part)
            if pending.count >= 2 * max(1, workers) { try flush() }
        }
        try flush()
        var used = DeflatedChunks(level: cachedChunks.level)
        for piece in made { used.chunks[piece.key] = piece.chunk }

        let names = made.map { SearchIndex.partName(sha256: $0.sha256) }
        let root = SearchIndex.root(courseID: course.id, language: course.language, textVersion: Self.textVersion, parts: names)
        contentHash = SHA256Hex.of(root)
        var files = [SharedContent.File(name: SearchIndex.fileName, sha256: contentHash, content: .bytes(root))]
        for (name, piece) in zip(names, made) {
            files.append(SharedContent.File(name: name, sha256: piece.sha256, content: .prepared(piece.entry)))
        }
        self.files = files
        self.texts = texts
        chunks = used
        changedTexts = texts.changedShards(since: cachedTexts, extracted: extracted)
        chunksChanged = used.chunks.count != known.count || made.contains { known[$0.key] == nil }
    }

    /// The search document of one listed block, and whether its text was extracted anew (not
    /// taken from `cachedTexts`); nil for a block with neither name nor text.
    private static func document(
        of entry: BlockEntry, blocks: CourseBlocks, course: Course, export: ExportDirectory, renderer: BlockRenderer,
        cachedTexts: SearchTexts, tokenizer: SearchTokenizer
    ) -> (EncodedSearchDocument, extracted: Bool)? {
        guard let position = blocks.positions[entry.usageID] else { return nil }
        // Containers above the block, outermost first, without the course itself. Read in
        // place: a copy of each `Block` retains and releases its dozen fields.
        let path = blocks.blocks[position].parents.reversed().compactMap { id -> String? in
            guard let parent = blocks.positions[id], blocks.blocks[parent].type != "course" else { return nil }
            return blocks.blocks[parent].displayName
        }
        let title = entry.displayName ?? ""
        let page = entry.isOffline ? entry.archive.map { String($0.dropLast(".zip".count)) + "/index.html" } : nil
        if let known = cachedTexts.text(of: entry.usageID, contentHash: entry.contentHash, offline: entry.isOffline) {
            // As a fresh build decides it: a block with neither name nor text is left out.
            guard !title.isEmpty || known.text.count > 2 else { return nil }
            return (EncodedSearchDocument(
                usageID: entry.usageID, type: entry.type, title: title, path: path, page: page,
                textLiteral: known.text, bodyTermsLiteral: known.bodyTerms, tokenizer: tokenizer), false)
        }
        var text = ""
        if entry.isOffline {
            switch renderer.learnerText(of: blocks.blocks[position], in: course, export: export) {
            case .html(let html): text = VisibleText.of(html: html)
            case .plain(let plain): text = VisibleText.collapsingWhitespace(plain)
            case nil: break
            }
        }
        guard !title.isEmpty || !text.isEmpty else { return nil }
        let document = SearchDocument(usageID: entry.usageID, type: entry.type, title: title, path: path, page: page, text: text, tokenizer: tokenizer)
        return (EncodedSearchDocument(document), true)
    }

    /// The texts the next build may reuse, and the usage ids whose text this build extracted.
    private static func texts(
        of documents: some Sequence<(BlockEntry, (EncodedSearchDocument, extracted: Bool)?)>, language: String
    ) -> (SearchTexts, extracted: Set<String>) {
        var texts = SearchTexts(textVersion: textVersion, language: language)
        var extracted = Set<String>()
        for (entry, document) in documents {
            guard let (document, fresh) = document, let contentHash = entry.contentHash else { continue }
            if fresh { extracted.insert(entry.usageID) }
            texts.texts[entry.usageID] = SearchTexts.Text(
                contentHash: contentHash, offline: entry.isOffline, text: document.textLiteral, bodyTerms: document.bodyTermsLiteral)
        }
        return (texts, extracted)
    }

    /// The part files, one at a time as they are iterated: the documents cut at document
    /// boundaries (`minimumChunk`), each run between `SearchIndex.partOpening` and `partClosing`.
    static func parts<Documents: Sequence<EncodedSearchDocument>>(of documents: Documents) -> some Sequence<[UInt8]> {
        var iterator = documents.makeIterator()
        var finished = false
        var emitted = false
        return AnyIterator<[UInt8]> {
            guard !finished else { return nil }
            var current = SearchIndex.partOpening
            var count = 0
            while let document = iterator.next() {
                if count > 0 { current.append(UInt8(ascii: ",")) }
                document.append(to: &current)
                count += 1
                if current.count >= maximumChunk || (current.count >= minimumChunk && hash(document.usageID) % boundaryEvery == 0) {
                    emitted = true
                    return current + SearchIndex.partClosing
                }
            }
            finished = true
            // The last run, or one empty part for a course with no document.
            guard count > 0 || !emitted else { return nil }
            return current + SearchIndex.partClosing
        }
    }

    /// 64-bit FNV-1a: stable across runs and platforms, unlike `Hasher`.
    static func hash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    /// A part's entry: its deflated bytes ended by an empty final block, or the bytes
    /// themselves when deflating does not make them smaller (as `ZipWriter.prepare` decides).
    private static func entry(of part: [UInt8], deflated chunk: DeflatedChunks.Chunk) -> PreparedEntry {
        guard chunk.deflated.count + DeflatedChunks.finalBlock.count < chunk.length else {
            return PreparedEntry(method: .stored, crc32: chunk.crc32, uncompressedSize: UInt64(chunk.length), payload: part)
        }
        var payload: [UInt8] = []
        payload.reserveCapacity(chunk.deflated.count + DeflatedChunks.finalBlock.count)
        payload += chunk.deflated
        payload += DeflatedChunks.finalBlock
        return PreparedEntry(method: .deflated, crc32: chunk.crc32, uncompressedSize: UInt64(chunk.length), payload: payload)
    }

    /// The texts and deflated pieces the next build of the same output reuses, in the state folder.
    func saveCaches(to stateFolder: String) {
        texts.save(shards: changedTexts, to: stateFolder)
        if chunksChanged { chunks.save(to: stateFolder) }
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
