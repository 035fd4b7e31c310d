import BlockRenderer
import CourseExport
import FileSystem
import Foundation
import IncrementalBuild
import ParallelMap

/// Everything a block's page is made from, as one digest per block: its own definition (the
/// parsed element and its bytes, merged attributes, place in the course, groups), the file
/// holding its HTML, the style-only head of its unit, where each name its links look up among
/// the other blocks lands (found or not), and the course-wide context every page shares
/// (settings and program, course identity and language, the name and content hash of every
/// static file). Equal digests, equal pages: a block whose digest is unchanged is not rendered
/// again. The names a page looks up follow from the rest of its inputs, so the names its last
/// rendering looked up (kept in its memo) are those it would look up again while the rest is
/// unchanged. A missed input would publish a stale page, so the property test compares
/// incremental builds with fresh ones after random edits.
struct BlockInputs: Sendable {
    /// The settings, the course's identity and every static file; nil when a static file
    /// cannot be read: every block is rendered.
    let base: String?
    /// `base`, once the pages are planned; nil until then.
    private(set) var context: String?
    /// Where a link to another block lands (`PagePlan`), by the name it looks up.
    private(set) var jumpTargets: [String: String] = [:]
    private(set) var onlineTargets: [String: String] = [:]
    /// Each leaf's own inputs (`ownDigest`), by usage id.
    let own: [String: String]
    /// The style-only html blocks' head elements (`BlockRenderer.styleOnlyElements`), by usage
    /// id, found from the bytes read for `own`: at 100,000 blocks a second read of every html
    /// file for them was a tenth of an edit's planning.
    let styleOnly: [String: [UInt8]]
    /// What this build found of the html files the leaves keep their HTML in, for the next.
    let htmlFiles: HTMLFileFacts

    /// `remembered`: what the last build found of the html files; a file it vouches for (by
    /// its stamp) is not read, unless it holds only style elements, which are read from it.
    init(
        settings: [String], course: Course, leaves: [Block], export: ExportDirectory, renderer: BlockRenderer, assets: AssetStore,
        remembered: HTMLFileFacts = HTMLFileFacts(), workers: Int
    ) {
        let statics = Self.digest(ofStaticFiles: course.staticFiles.paths, assets: assets, workers: workers)
        var digest = InputDigest("coursepack-block-base-v1")
        for setting in settings { digest.add(setting) }
        for field in [course.id, course.displayName, course.language, statics ?? ""] { digest.add(field) }
        let base = statics.map { _ in digest.finish() }
        self.base = base
        let read = leaves.parallelMap(workers: workers) { block -> (own: String?, styleOnly: [UInt8]?, fact: HTMLFileFacts.Fact?) in
            guard let file = block.htmlFile else {
                return (base.flatMap { Self.ownDigest(of: block, base: $0, htmlFileHash: nil) }, renderer.styleOnlyElements(of: block, htmlFileBytes: nil), nil)
            }
            // Stamped before it is read: a file changed while it is read has another stamp by
            // the next build, which then reads it again.
            let stamp = export.plainFileStamp(file)
            if let stamp, let known = remembered.fact(of: file, stamp: stamp), !known.styleOnly {
                return (base.flatMap { Self.ownDigest(of: block, base: $0, htmlFileHash: known.sha256) }, nil, known)
            }
            guard let bytes = try? export.read(file) else {
                return (nil, nil, nil)
            }
            let sha256 = SHA256Hex.of(bytes)
            let elements = renderer.styleOnlyElements(of: block, htmlFileBytes: bytes)
            return (
                base.flatMap { Self.ownDigest(of: block, base: $0, htmlFileHash: sha256) }, elements,
                stamp.map { HTMLFileFacts.Fact(stamp: $0, sha256: sha256, styleOnly: elements != nil) }
            )
        }
        var own: [String: String] = [:]
        var styleOnly: [String: [UInt8]] = [:]
        var htmlFiles = HTMLFileFacts()
        own.reserveCapacity(base == nil ? 0 : leaves.count)
        for (block, found) in zip(leaves, read) {
            if let digest = found.own { own[block.usageID] = digest }
            if let elements = found.styleOnly { styleOnly[block.usageID] = elements }
            if let file = block.htmlFile, let fact = found.fact { htmlFiles.facts[file] = fact }
        }
        self.own = own
        self.styleOnly = styleOnly
        self.htmlFiles = htmlFiles
    }

    /// Takes where links land: after this, `digest(of:unitHead:links:)` gives each page's inputs.
    mutating func plan(_ plan: PagePlan) {
        guard let base else { return }
        var digest = InputDigest("coursepack-block-context-v3")
        digest.add(base)
        context = digest.finish()
        jumpTargets = plan.jumpTargets
        onlineTargets = plan.onlineTargets
    }

    /// By content, not by stamp: a course exported just before its build has every static file
    /// too fresh for its stamp to be trusted, and a stamp-only context then rendered every page
    /// again on the next edit. The hashes come from the hash cache while a file's stamp is
    /// unchanged, so a rebuild reads only what changed.
    static func digest(ofStaticFiles paths: Set<String>, assets: AssetStore, workers: Int) -> String? {
        let sorted = paths.sorted()
        let hashes = sorted.parallelMap(workers: sorted.count >= 64 ? workers : 1) { try? assets.contentHash($0) }
        var digest = InputDigest("coursepack-static-files-v1")
        for (path, hash) in zip(sorted, hashes) {
            guard let hash else { return nil }
            digest.add(path)
            digest.add(hash)
        }
        return digest.finish()
    }

    /// Everything a page is made from but its unit's style-only head and where links to other
    /// blocks land: `base` and the block's own definition, place and HTML file. Whether a
    /// problem or a video has a page at all depends on nothing else (`PageFacts`). Nil when the
    /// block's content cannot be read: it is rendered, and fails as it should.
    /// `htmlFileHash`: the SHA-256 of the block's `htmlFile`, nil when it has none or it cannot
    /// be read.
    static func ownDigest(of block: Block, base: String, htmlFileHash: String?) -> String? {
        var digest = InputDigest("coursepack-block-own-v2")
        digest.add(base)
        for field in [block.type, block.urlName, block.usageID, block.displayName ?? "\u{0}", block.file, block.htmlFile ?? "\u{0}"] {
            digest.add(field)
        }
        for key in block.attributes.keys.sorted() {
            digest.add(key)
            digest.add(block.attributes[key] ?? "")
        }
        digest.add(block.parents.joined(separator: "\n"))
        digest.add(block.children.joined(separator: "\n"))
        for partition in block.groupAccess.keys.sorted() {
            digest.add("\(partition):\(block.groupAccess[partition] ?? [])")
        }
        if let group = block.splitTestGroup {
            digest.add("\(group.splitTest) \(group.userPartitionID) \(group.groupID.map(String.init) ?? "-")")
        }
        Self.add(block.definition, to: &digest)
        let range = block.definition.contentRange
        if range.lowerBound >= 0, range.upperBound <= block.definitionSource.count {
            digest.add(bytes: block.definitionSource[range])
        }
        if block.htmlFile != nil {
            guard let htmlFileHash else { return nil }
            digest.add(htmlFileHash)
        }
        return digest.finish()
    }

    /// `links`: the names the page's links look up among the other blocks, sorted, or
    /// `LookedUpLinks.everyTarget` for a page that looks up too many to list. Nil when
    /// the block's content cannot be read or the pages are not planned yet.
    func digest(of block: Block, unitHead: [UInt8], links: [String]) -> String? {
        guard let context, let own = own[block.usageID] else { return nil }
        var digest = InputDigest("coursepack-block-inputs-v3")
        digest.add(context)
        digest.add(own)
        digest.add(bytes: unitHead)
        digest.add("\(links.count)")
        if links == [LookedUpLinks.everyTarget] {
            digest.add(links[0])
            for (name, folder) in jumpTargets.sorted(by: { $0.key < $1.key }) {
                digest.add(name)
                digest.add(folder)
            }
            digest.add("\u{0}")
            for (name, usageID) in onlineTargets.sorted(by: { $0.key < $1.key }) {
                digest.add(name)
                digest.add(usageID)
            }
            return digest.finish()
        }
        for name in links {
            digest.add(name)
            digest.add(jumpTargets[name] ?? "\u{0}")
            digest.add(onlineTargets[name] ?? "\u{0}")
        }
        return digest.finish()
    }

    /// The parsed element, entities expanded: a DOCTYPE at the top of its file can change it
    /// without touching its bytes.
    private static func add(_ element: XMLElement, to digest: inout InputDigest) {
        var pending: [XMLNode] = [.element(element)]
        while let node = pending.popLast() {
            switch node {
            case .text(let text):
                digest.add("t")
                digest.add(text)
            case .element(let element):
                digest.add("e")
                digest.add(element.name)
                for attribute in element.attributes {
                    digest.add(attribute.name)
                    digest.add(attribute.value)
                }
                digest.add("\(element.children.count)")
                pending.append(contentsOf: element.children.reversed())
            }
        }
    }
}

/// What a block not rendered again must still report, the warnings its page gave, and what
/// its next build checks: the names its links looked up among the other blocks.
struct BlockNote: Codable, Sendable, Equatable {
    var warnings: [Diagnostic]
    var links: [String]

    /// Part of every block's inputs: a note from a build that recorded less (warnings before
    /// they carried an id, links before they were kept) is not reused, and its block is
    /// rendered again.
    static let format = "note-3"
}

/// A note's fields in its memo: the warnings as one JSON document (empty when there are none,
/// as for almost every block), then each link name as a field of its own.
extension BlockNote: MemoNote {
    var memoFields: [[UInt8]]? {
        var warnings: [UInt8] = []
        if !self.warnings.isEmpty {
            guard let encoded = try? JSONEncoder().encode(self.warnings) else { return nil }
            warnings = Array(encoded)
        }
        return [warnings] + links.map { Array($0.utf8) }
    }

    init?(memoFields fields: ArraySlice<ArraySlice<UInt8>>) {
        guard let first = fields.first else { return nil }
        if first.isEmpty {
            warnings = []
        } else {
            guard let decoded = try? JSONDecoder().decode([Diagnostic].self, from: Data(first)) else { return nil }
            warnings = decoded
        }
        links = fields.dropFirst().map { String(decoding: $0, as: UTF8.self) }
    }
}
