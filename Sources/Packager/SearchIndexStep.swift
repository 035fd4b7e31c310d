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
/// every part by its hash. A rebuild takes the deflated bytes of unchanged parts from
/// `DeflatedChunks`, and the bytes (or the text) of unchanged documents in a part made again
/// from the last build's parts (`PreviousDocuments`).
struct SearchIndexStep: Sendable {
    let contentHash: String
    /// `index.js` and the parts, in order, as the archive and the course files hold them; let
    /// go once published.
    var files: [SharedContent.File]
    /// What the next build may reuse, and whether it differs from what this one started with.
    let chunks: DeflatedChunks
    let chunksChanged: Bool
    let parts: SearchParts
    let partsChanged: Bool
    /// How many documents had their block's text read from its page (not from the last
    /// build's parts): every one in a first build, the edited pages' in a rebuild.
    let extracted: Int

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

    /// `cachedChunks` and `cachedParts`: what the previous build of this output left in the
    /// state folder (the parts deflated at the level the archive is written at). A part whose
    /// documents all have the fingerprints of a part the last build made is that part again:
    /// it is neither encoded, hashed nor deflated. In a part made again, a document with the
    /// fingerprint of one the last build made is that document's bytes, read back from its
    /// part; a block whose `content_hash` is unchanged shows the same page, so its text and
    /// terms are taken from there too, under the name and path it has now.
    init(
        course: Course, export: ExportDirectory, renderer: BlockRenderer, entries: [BlockEntry],
        cachedChunks: DeflatedChunks, cachedParts: SearchParts, workers: Int
    ) throws(ZlibError) {
        let previous = PreviousDocuments(parts: cachedParts, chunks: cachedChunks)
        let sources = DocumentSources(course: course, export: export, renderer: renderer, previous: previous)
        if let step = try Self.make(entries: entries, sources: sources, cachedChunks: cachedChunks, cachedParts: cachedParts, workers: workers) {
            self = step
            return
        }
        // A recorded length that is not the document's: the records are not trusted, and the
        // index is cut from the documents themselves, as a first build cuts it.
        let unrecorded = SearchParts(scope: cachedParts.scope)
        let fresh = DocumentSources(
            course: course, export: export, renderer: renderer, previous: PreviousDocuments(parts: unrecorded, chunks: cachedChunks))
        guard let step = try Self.make(entries: entries, sources: fresh, cachedChunks: cachedChunks, cachedParts: unrecorded, workers: workers)
        else { preconditionFailure("a search document's encodedCount is not the length append writes") }
        self = step
    }

    private init(
        contentHash: String, files: [SharedContent.File], chunks: DeflatedChunks, chunksChanged: Bool, parts: SearchParts,
        partsChanged: Bool, extracted: Int
    ) {
        self.contentHash = contentHash
        self.files = files
        self.chunks = chunks
        self.chunksChanged = chunksChanged
        self.parts = parts
        self.partsChanged = partsChanged
        self.extracted = extracted
    }

    /// What a block's document is made from, besides its entry.
    private struct DocumentSources: Sendable {
        let course: Course
        let export: ExportDirectory
        let renderer: BlockRenderer
        let previous: PreviousDocuments
        let tokenizer: SearchTokenizer
        // Positions, not copies: at 100,000 blocks a table of `Block` values and a second
        // array of entries were a tenth of a gigabyte.
        let blocks: CourseBlocks

        init(course: Course, export: ExportDirectory, renderer: BlockRenderer, previous: PreviousDocuments) {
            self.course = course
            self.export = export
            self.renderer = renderer
            self.previous = previous
            tokenizer = SearchTokenizer(language: course.language)
            blocks = CourseBlocks(course.blocks)
        }
    }

    /// One listed block as the parts are cut: its fingerprint and text key, and the length of
    /// its encoded document (0 when it has none).
    private struct Planned: Sendable {
        let entry: Int
        let title: String
        let path: [String]
        let page: String?
        let fingerprint: [UInt8]?
        let textKey: SearchParts.TextKey?
        let length: Int
    }

    /// A document made while planning, or its bytes read back from the last build's part.
    private enum Made: Sendable {
        case document(EncodedSearchDocument, extracted: Bool)
        case bytes(ArraySlice<UInt8>)

        var count: Int {
            switch self {
            case .document(let document, _): document.encodedCount
            case .bytes(let bytes): bytes.count
            }
        }

        func append(to bytes: inout [UInt8]) {
            switch self {
            case .document(let document, _): document.append(to: &bytes)
            case .bytes(let found): bytes.append(contentsOf: found)
            }
        }
    }

    /// A part made or found again, and how many of its documents had their text extracted.
    private struct MadePart: Sendable {
        let sha256: String
        let key: [UInt8]
        let chunk: DeflatedChunks.Chunk
        let entry: PreparedEntry
        let fingerprint: [UInt8]?
        let extracted: Int
    }

    /// Blocks planned at a time: the documents made for them (in a first build, every page's
    /// text) are let go once the parts holding them are deflated, so at 100,000 pages the
    /// course's whole text is never held at once.
    static let planBatch = 4096

    /// Nil when a length `cachedParts` gives is not that of the document it names.
    private static func make(
        entries: [BlockEntry], sources: DocumentSources, cachedChunks: DeflatedChunks, cachedParts: SearchParts, workers: Int
    ) throws(ZlibError) -> SearchIndexStep? {
        let course = sources.course
        let listed = entries.indices.filter { sources.blocks[entries[$0].usageID] != nil }
        let known = cachedChunks.chunks
        var used = DeflatedChunks(level: cachedChunks.level)
        var parts = SearchParts(scope: cachedParts.scope)
        parts.reserveCapacity(listed.count)
        var partsMade: [MadePart] = []
        var extracted = 0
        var cutter = PartCutter()
        // The documents of the part being cut, carried from one batch to the next.
        var open: [(Planned, Made?)] = []

        // Each part is encoded and deflated (or its deflated piece taken from the cache) by the
        // worker that takes it, and only its compressed form is kept: at 100,000 pages the raw
        // parts alone were a fifth of a gigabyte, held beside their compressed copy. The workers
        // take parts as they finish one, without waiting for each other.
        func makeParts(_ cut: [[(Planned, Made?)]]) throws(ZlibError) -> Bool {
            let made = cut.parallelMap(workers: workers) { members in
                Result { () throws(ZlibError) -> MadePart? in
                    try Self.part(of: members, entries: entries, sources: sources, known: known, parts: cachedParts.parts, level: cachedChunks.level)
                }
            }
            for (members, result) in zip(cut, made) {
                guard let piece = try result.get() else { return false }
                partsMade.append(piece)
                extracted += piece.extracted
                used.chunks[piece.key] = piece.chunk
                if let fingerprint = piece.fingerprint { parts.parts[fingerprint] = SearchParts.Part(sha256: piece.sha256, chunkKey: piece.key) }
                // Where each document is in the part's bytes: after the opening, a comma between two.
                let chunk = parts.addChunk(piece.key)
                var offset = SearchIndex.partOpening.count
                for (block, _) in members {
                    if let fingerprint = block.fingerprint, let at = Int32(exactly: offset) {
                        parts.record(fingerprint, SearchParts.Document(length: block.length, chunk: chunk, offset: at, textKey: block.textKey))
                    }
                    offset += block.length + 1
                }
            }
            return true
        }

        for start in stride(from: 0, to: listed.count, by: planBatch) {
            let batch = Array(listed[start..<min(start + planBatch, listed.count)])
            let planned = batch.parallelMap(workers: workers) { position in
                Self.plan(entries[position], at: position, sources: sources, parts: cachedParts)
            }
            var cut: [[(Planned, Made?)]] = []
            for (block, made) in planned {
                guard block.length > 0 else {
                    if let fingerprint = block.fingerprint { parts.record(fingerprint, SearchParts.Document(length: 0, textKey: nil)) }
                    continue
                }
                open.append((block, made))
                if cutter.ends(after: block.length, isBoundary: Self.hash(entries[block.entry].usageID) % boundaryEvery == 0) {
                    cut.append(open)
                    open = []
                }
            }
            guard try makeParts(cut) else { return nil }
        }
        // The last part, and the one empty part of a course with no document.
        if !open.isEmpty || partsMade.isEmpty {
            guard try makeParts([open]) else { return nil }
        }

        let names = partsMade.map { SearchIndex.partName(sha256: $0.sha256) }
        let root = SearchIndex.root(courseID: course.id, language: course.language, textVersion: Self.textVersion, parts: names)
        let contentHash = SHA256Hex.of(root)
        var files = [SharedContent.File(name: SearchIndex.fileName, sha256: contentHash, content: .bytes(root))]
        for (name, piece) in zip(names, partsMade) {
            files.append(SharedContent.File(name: name, sha256: piece.sha256, content: .prepared(piece.entry)))
        }
        return SearchIndexStep(
            contentHash: contentHash, files: files, chunks: used,
            chunksChanged: used.chunks.count != known.count || partsMade.contains { known[$0.key] == nil },
            parts: parts, partsChanged: parts.differs(from: cachedParts), extracted: extracted)
    }

    /// A listed block's fingerprint and length: recorded by the last build, or found by making
    /// its document now (returned beside it).
    private static func plan(_ entry: BlockEntry, at position: Int, sources: DocumentSources, parts: SearchParts) -> (Planned, Made?) {
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
        let textKey = SearchParts.textKey(of: entry)
        if let fingerprint, let length = parts.length(of: fingerprint) {
            return (Planned(entry: position, title: title, path: path, page: page, fingerprint: fingerprint, textKey: textKey, length: length), nil)
        }
        let made = Self.document(of: entry, title: title, path: path, page: page, textKey: textKey, sources: sources)
        let planned = Planned(
            entry: position, title: title, path: path, page: page, fingerprint: fingerprint, textKey: textKey,
            length: made?.count ?? 0)
        return (planned, made)
    }

    /// The part holding the documents of `members` (positions in `planned`): the last build's
    /// when their fingerprints are those of one it made and its deflated piece is at hand;
    /// otherwise encoded and deflated (or its piece found by its bytes). Nil when a document
    /// made here is not of the length its record gave.
    private static func part(
        of members: [(Planned, Made?)], entries: [BlockEntry], sources: DocumentSources, known: [[UInt8]: DeflatedChunks.Chunk],
        parts: [[UInt8]: SearchParts.Part], level: Int32
    ) throws(ZlibError) -> MadePart? {
        let fingerprints = members.compactMap(\.0.fingerprint)
        let fingerprint = fingerprints.count == members.count ? SearchParts.partKey(of: fingerprints) : nil
        let length = members.reduce(SearchIndex.partOpening.count + SearchIndex.partClosing.count + max(0, members.count - 1)) {
            $0 + $1.0.length
        }
        var extracted = members.count { if case .document(_, extracted: true)? = $0.1 { true } else { false } }
        if let fingerprint, let found = parts[fingerprint], let chunk = known[found.chunkKey], chunk.length == length,
            Self.isDeflated(chunk)
        {
            return Self.made(sha256: found.sha256, key: found.chunkKey, chunk: chunk, bytes: [], fingerprint: fingerprint, extracted: extracted)
        }
        var bytes = SearchIndex.partOpening
        bytes.reserveCapacity(length)
        for (count, (block, madeWhilePlanning)) in members.enumerated() {
            var document = madeWhilePlanning
            if document == nil, let fingerprint = block.fingerprint,
                let found = sources.previous.bytes(of: fingerprint, usageID: entries[block.entry].usageID)
            {
                document = .bytes(found)
            }
            if document == nil {
                document = Self.document(
                    of: entries[block.entry], title: block.title, path: block.path, page: block.page, textKey: block.textKey, sources: sources)
                if case .document(_, extracted: true) = document { extracted += 1 }
            }
            guard let document else { return nil }
            if count > 0 { bytes.append(UInt8(ascii: ",")) }
            let before = bytes.count
            document.append(to: &bytes)
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
        return Self.made(sha256: SHA256Hex.of(bytes), key: key, chunk: chunk, bytes: bytes, fingerprint: fingerprint, extracted: extracted)
    }

    private static func made(
        sha256: String, key: [UInt8], chunk: DeflatedChunks.Chunk, bytes: [UInt8], fingerprint: [UInt8]?, extracted: Int
    ) -> MadePart {
        let entry = Self.entry(of: bytes, deflated: chunk)
        // What the cache keeps is the entry's own bytes, less the final block.
        let kept = entry.method == .deflated
            ? DeflatedChunks.Chunk(crc32: chunk.crc32, length: chunk.length, deflated: entry.payload.dropLast(DeflatedChunks.finalBlock.count))
            : chunk
        return MadePart(sha256: sha256, key: key, chunk: kept, entry: entry, fingerprint: fingerprint, extracted: extracted)
    }

    /// The search document of one listed block, its text and terms taken from the last build's
    /// parts while its page is the one they were read from (`textKey`), else extracted from the
    /// page; nil for a block with neither name nor text.
    private static func document(
        of entry: BlockEntry, title: String, path: [String], page: String?, textKey: SearchParts.TextKey?, sources: DocumentSources
    ) -> Made? {
        guard let position = sources.blocks.positions[entry.usageID] else { return nil }
        let tokenizer = sources.tokenizer
        if let textKey, let known = sources.previous.literals(of: textKey, usageID: entry.usageID) {
            // As a fresh build decides it: a block with neither name nor text is left out.
            guard !title.isEmpty || known.text.count > 2 else { return nil }
            return .document(EncodedSearchDocument(
                usageID: entry.usageID, type: entry.type, title: title, path: path, page: page,
                textLiteral: known.text, bodyTermsLiteral: known.bodyTerms, tokenizer: tokenizer), extracted: false)
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
        // An online block's document has no text to read: nothing was extracted for it.
        return .document(EncodedSearchDocument(document), extracted: entry.isOffline)
    }

    /// Where the parts end, fed the documents' encoded lengths in order: a part ends after a
    /// document for which `isBoundary` holds once it holds `minimumChunk` bytes, or after the
    /// one that takes it to `maximumChunk`, each run between `SearchIndex.partOpening` and
    /// `partClosing`, commas between documents.
    struct PartCutter {
        private var size = SearchIndex.partOpening.count
        private var count = 0

        /// Whether the part ends after a document of `length` bytes.
        mutating func ends(after length: Int, isBoundary: Bool) -> Bool {
            if count > 0 { size += 1 }
            size += length
            count += 1
            guard size >= maximumChunk || (size >= minimumChunk && isBoundary) else { return false }
            size = SearchIndex.partOpening.count
            count = 0
            return true
        }
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
        PreviousDocuments.removeLegacyTexts(in: stateFolder)
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
