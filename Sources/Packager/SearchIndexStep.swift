import BlockRenderer
import CourseExport
import CourseSearch
import Crypto
import FileSystem
import Foundation
import Manifest
import ParallelMap
import ZipArchive

/// The build's search step: the learner-visible text of every leaf block that the manifest
/// lists (html text, problem questions, video transcripts), with its display name and outline
/// path, into one deterministic `search/<hash>.zip` beside the block archives. The archive's
/// name is its content's hash, so it is written again only when some block's text, name or
/// place changed.
struct SearchIndexStep: Sendable {
    let index: SearchIndex
    let bytes: [UInt8]
    let contentHash: String

    var archivePath: String { "search/\(contentHash.prefix(16)).zip" }

    /// Bumped when what is taken from a block changes (`SearchIndex.textVersion`): the text of
    /// unchanged blocks is then extracted again, and an unchanged build (which stops before
    /// this step) still notices through the build's fingerprint.
    static let textVersion = 1
    static var fingerprint: String { "search-\(SearchIndex.formatVersion)-\(textVersion)" }

    /// `previous`: the index the previous publish holds, with that publish's entries. A block
    /// whose `content_hash` is unchanged shows the same page, so its text is taken from there
    /// instead of being extracted again; its name and path are always taken anew.
    init(
        course: Course, export: ExportDirectory, renderer: BlockRenderer, entries: [BlockEntry],
        previous: (index: SearchIndex, entries: [String: BlockEntry])?, workers: Int
    ) {
        let tokenizer = SearchTokenizer(language: course.language)
        let blocks = Dictionary(course.blocks.map { ($0.usageID, $0) }, uniquingKeysWith: { first, _ in first })
        let reusable: [String: SearchDocument]
        if let previous, previous.index.textVersion == Self.textVersion, previous.index.language == course.language {
            reusable = Dictionary(previous.index.documents.map { ($0.usageID, $0) }, uniquingKeysWith: { first, _ in first })
        } else {
            reusable = [:]
        }
        let listed = entries.filter { blocks[$0.usageID] != nil }
        let documents = listed.parallelMap(workers: workers) { entry -> SearchDocument? in
            guard let block = blocks[entry.usageID] else { return nil }
            // Containers above the block, outermost first, without the course itself.
            let path = block.parents.reversed().compactMap { id -> String? in
                guard let parent = blocks[id], parent.type != "course" else { return nil }
                return parent.displayName
            }
            let title = entry.displayName ?? ""
            let page = entry.isOffline ? entry.archive.map { String($0.dropLast(".zip".count)) + "/index.html" } : nil
            if let hash = entry.contentHash, let before = previous?.entries[entry.usageID], before.contentHash == hash,
                before.isOffline == entry.isOffline, var document = reusable[entry.usageID]
            {
                document.rename(title: title, path: path, page: page, tokenizer: tokenizer)
                return document
            }
            var text = ""
            if entry.isOffline {
                switch renderer.learnerText(of: block, in: course, export: export) {
                case .html(let html): text = VisibleText.of(html: html)
                case .plain(let plain): text = VisibleText.collapsingWhitespace(plain)
                case nil: break
                }
            }
            guard !title.isEmpty || !text.isEmpty else { return nil }
            return SearchDocument(usageID: entry.usageID, type: entry.type, title: title, path: path, page: page, text: text, tokenizer: tokenizer)
        }
        index = SearchIndex(courseID: course.id, language: course.language, documents: documents.compactMap { $0 }, textVersion: Self.textVersion)
        bytes = index.encoded()
        contentHash = SHA256Hex.of(bytes)
    }

    /// The index `manifest` (the previous publish) lists in `folder`; nil when there is none or
    /// it cannot be read, and every block's text is extracted.
    static func published(in folder: String, manifest: CourseManifest?) -> (index: SearchIndex, entries: [String: BlockEntry])? {
        guard let manifest, let archive = manifest.search, Staging.isPublishable(archive.archive),
            let bytes = try? ZipReader(path: folder + "/" + archive.archive).contents(of: SearchIndex.fileName),
            let index = try? SearchIndex.decode(bytes, path: archive.archive)
        else { return nil }
        return (index, Dictionary(manifest.blocks.map { ($0.usageID, $0) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Writes the archive unless the previous publish already holds it; `written` says whether
    /// its folder got a new name to sync.
    func publish(into folder: String, writer: ZipWriter, previous: SearchArchive?) throws -> (SearchArchive, written: Bool) {
        let path = folder + "/" + archivePath
        if let previous, previous.archive == archivePath, previous.contentHash == contentHash,
            FileStamp.of(path)?.size == previous.size, (try? SHA256Hex.ofFile(path)) == previous.sha256
        {
            return (previous, false)
        }
        try FileManager.default.createDirectory(atPath: folder + "/search", withIntermediateDirectories: true)
        var hasher = SHA256()
        let written = try writer.write([ZipEntry(name: SearchIndex.fileName, source: .bytes(bytes))], to: path) {
            hasher.update(bufferPointer: $0)
        }
        let sha256 = written.observedAll ? SHA256Hex.hex(hasher.finalize()) : try CourseFileDigest.archive(path)
        return (SearchArchive(archive: archivePath, size: written.size, sha256: sha256, contentHash: contentHash), true)
    }
}
