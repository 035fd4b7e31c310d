import FileSystem
import BlockRenderer
import CourseExport
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

    init(course: Course, export: ExportDirectory, renderer: BlockRenderer, workers: Int) {
        let leaves = course.blocks.filter { !$0.isContainer }
        let facts = leaves.parallelMap(workers: workers) { block in
            (hasPage: renderer.hasPage(block, in: course, export: export), styleOnly: renderer.styleOnlyElements(of: block, export: export))
        }

        var firstPage: [String: String] = [:]
        var jump: [String: String] = [:]
        var online: [String: String] = [:]
        for (block, fact) in zip(leaves, facts) {
            guard fact.hasPage else { continue }
            let folder = ArchiveNaming.folderPath(type: block.type, urlName: block.urlName)
            firstPage[block.usageID] = folder
            for parent in block.parents where firstPage[parent] == nil { firstPage[parent] = folder }
        }
        for block in course.blocks {
            if let folder = firstPage[block.usageID] {
                jump[block.usageID] = folder
                if jump[block.urlName] == nil { jump[block.urlName] = folder }
            } else {
                online[block.usageID] = block.usageID
                if online[block.urlName] == nil { online[block.urlName] = block.usageID }
            }
        }
        // A url_name shared by a block with a page and one without opens the one with a page.
        jumpTargets = jump
        onlineTargets = online.filter { jump[$0.key] == nil }

        var styleOnlyByUnit: [String: [(usageID: String, elements: [UInt8])]] = [:]
        for (block, fact) in zip(leaves, facts) {
            guard let elements = fact.styleOnly, let unit = block.parents.first else { continue }
            styleOnlyByUnit[unit, default: []].append((block.usageID, elements))
        }
        var heads: [String: [UInt8]] = [:]
        for block in leaves {
            guard let unit = block.parents.first, let styles = styleOnlyByUnit[unit] else { continue }
            let others = styles.filter { $0.usageID != block.usageID }.flatMap(\.elements)
            if !others.isEmpty { heads[block.usageID] = others }
        }
        unitHeads = heads
    }
}
