import FileSystem
import BlockRenderer
import CourseExport
import IncrementalBuild
import ParallelMap

/// What every page needs to know about the others before any is rendered: which blocks get an
/// archive (links to the rest point online), where a jump link lands, and the style-only
/// components of each unit, which the LMS applies to every component of that unit.
struct PagePlan: Sendable {
    /// url_name or usage id → archive folder of the block a jump link opens: the block itself,
    /// or for a container its first leaf that has an archive.
    let jumpTargets: [String: String]
    /// url_name or usage id → usage id, for blocks and containers with no archive to open.
    let onlineTargets: [String: String]
    /// Leaf usage id → the `<style>`, `<link>` and `<script>` elements of the other style-only
    /// components of its unit, in course order.
    let unitHeads: [String: [UInt8]]
    /// Units whose style-only elements add up to more than `unitHeadLimit`, with their size:
    /// not copied into the unit's other pages. A 9 MB script-only block in a unit of 200
    /// pages once made 1.9 GB of pages and took 2.3 GB to build.
    let unsharedHeads: [(unit: String, bytes: Int)]
    static let unitHeadLimit = 256 << 10

    /// Whether each problem and video has a page, as this plan found it: what the next build
    /// remembers; `factsChanged` when that differs from what this build was given.
    let facts: PageFacts
    let factsChanged: Bool

    /// `own`: each leaf's own inputs (`BlockInputs.ownDigest`), by usage id. A problem or video
    /// whose own inputs are those `remembered` records is not rendered to know whether it has
    /// a page: at 100,000 blocks that was most of an edit's planning.
    /// `styleOnly`: the style-only html blocks' head elements (`BlockInputs.styleOnly`).
    init(
        course: Course, export: ExportDirectory, renderer: BlockRenderer, own: [String: String], styleOnly: [String: [UInt8]],
        remembered: PageFacts, workers: Int
    ) {
        // Positions, not copies: a copy of a `Block` retains and releases its dozen fields, and
        // at 100,000 blocks the plan's passes over copies were a fifth of its time.
        let blocks = course.blocks
        let leaves = blocks.indices.filter { !blocks[$0].isContainer }
        let facts = leaves.parallelMap(workers: workers) { position in
            let block = blocks[position]
            let digest = own[block.usageID]
            var hasPage: Bool
            var known: Bool? = nil
            if PageFacts.decidedByRendering(block.type), let digest { known = remembered.hasPage(block.usageID, inputs: digest) }
            if let known {
                hasPage = known
            } else {
                hasPage = renderer.hasPage(block, in: course, export: export)
            }
            return (hasPage: hasPage, styleOnly: styleOnly[block.usageID], own: digest, remembered: known != nil)
        }
        var found = PageFacts()
        var rendered = false
        for (position, fact) in zip(leaves, facts) where PageFacts.decidedByRendering(blocks[position].type) {
            guard let digest = fact.own else { continue }
            found.facts[blocks[position].usageID] = (digest, fact.hasPage)
            if !fact.remembered { rendered = true }
        }
        self.facts = found
        factsChanged = rendered || found.facts.count != remembered.facts.count

        var firstPage: [String: String] = [:]
        firstPage.reserveCapacity(blocks.count)
        var jump: [String: String] = [:]
        jump.reserveCapacity(2 * blocks.count)
        var online: [String: String] = [:]
        for (position, fact) in zip(leaves, facts) {
            guard fact.hasPage else { continue }
            let folder = ArchiveNaming.folderPath(type: blocks[position].type, urlName: blocks[position].urlName)
            firstPage[blocks[position].usageID] = folder
            // Nearest first: a container that has its first page already got it from an earlier
            // leaf below it, which gave one to every container above it too.
            for parent in blocks[position].parents {
                guard firstPage[parent] == nil else { break }
                firstPage[parent] = folder
            }
        }
        for position in blocks.indices {
            let (usageID, urlName) = (blocks[position].usageID, blocks[position].urlName)
            if let folder = firstPage[usageID] {
                jump[usageID] = folder
                if jump[urlName] == nil { jump[urlName] = folder }
            } else {
                online[usageID] = usageID
                if online[urlName] == nil { online[urlName] = usageID }
            }
        }
        // A url_name shared by a block with a page and one without opens the one with a page.
        jumpTargets = jump
        onlineTargets = online.filter { jump[$0.key] == nil }

        var styleOnlyByUnit: [String: [(usageID: String, elements: [UInt8])]] = [:]
        for (position, fact) in zip(leaves, facts) {
            guard let elements = fact.styleOnly, let unit = blocks[position].parents.first else { continue }
            styleOnlyByUnit[unit, default: []].append((blocks[position].usageID, elements))
        }
        var unshared: [(unit: String, bytes: Int)] = []
        for (unit, styles) in styleOnlyByUnit.sorted(by: { $0.key < $1.key }) {
            let bytes = styles.reduce(0) { $0 + $1.elements.count }
            guard bytes > Self.unitHeadLimit else { continue }
            unshared.append((unit, bytes))
            styleOnlyByUnit[unit] = nil
        }
        unsharedHeads = unshared
        var heads: [String: [UInt8]] = [:]
        if !styleOnlyByUnit.isEmpty {
            // Every page of a unit but its style-only ones shows all of the unit's style-only
            // elements: one array per unit, which those pages share, not a copy made per page.
            let units = styleOnlyByUnit.mapValues { (styles: $0, all: $0.flatMap(\.elements)) }
            for (position, fact) in zip(leaves, facts) {
                guard let unit = blocks[position].parents.first, let (styles, all) = units[unit] else { continue }
                let usageID = blocks[position].usageID
                let others = fact.styleOnly == nil ? all : styles.filter { $0.usageID != usageID }.flatMap(\.elements)
                if !others.isEmpty { heads[usageID] = others }
            }
        }
        unitHeads = heads
    }
}

/// Whether each problem and video has a page, by the digest of its own inputs: the next build
/// takes the answer while those inputs are the same, instead of rendering the block to know.
/// A state file like the others: damaged or of another format, it reads as nothing remembered.
struct PageFacts: Sendable {
    static let fileName = "page-facts.bin"
    static let format = "coursepack-page-facts-v1"

    /// Usage id → (own inputs, has a page).
    var facts: [String: (inputs: String, hasPage: Bool)] = [:]

    /// Html blocks always have a page and other types never do: only these are rendered to know.
    static func decidedByRendering(_ type: String) -> Bool { type == "problem" || type == "video" }

    func hasPage(_ usageID: String, inputs: String) -> Bool? {
        guard let fact = facts[usageID], fact.inputs == inputs else { return nil }
        return fact.hasPage
    }

    static func load(from folder: String) -> PageFacts {
        var loaded = PageFacts()
        guard let records = RecordFile.load(folder + "/" + fileName, format: format) else { return loaded }
        for fields in records {
            guard fields.count == 3, fields[2].count == 1 else { return PageFacts() }
            loaded.facts[String(decoding: fields[0], as: UTF8.self)] = (String(decoding: fields[1], as: UTF8.self), fields[2].first == UInt8(ascii: "1"))
        }
        return loaded
    }

    func save(to folder: String) {
        var file = RecordFile(format: Self.format, capacity: facts.count * 160)
        for usageID in facts.keys.sorted() {
            guard let fact = facts[usageID] else { continue }
            file.add([ArraySlice(usageID.utf8), ArraySlice(fact.inputs.utf8), ArraySlice((fact.hasPage ? "1" : "0").utf8)])
        }
        // Each fact holds for the inputs it names, whichever build wrote it: an older file is
        // still true, only less complete.
        file.save(to: folder + "/" + Self.fileName, synced: false)
    }
}
