import CourseExport

/// A block as a standalone page, before its links are rewritten.
public struct RenderedBlock: Sendable {
    /// `index.html`.
    public var page: [UInt8]
    /// Other generated files at the archive root (the stylesheet, a problem's script).
    public var files: [String: [UInt8]]
    /// What the page still needs the network for.
    public var requiresNetwork: [String]
    /// Export-relative file the page's content came from, for messages about it.
    public var contentFile: String
    /// What the page needs from the shared runtime archive.
    public var runtime: Set<RuntimeLibrary> = []
}

public enum RenderResult: Sendable {
    case rendered(RenderedBlock)
    /// The block cannot work offline; clients open it online.
    case onlineOnly(reason: String)
}

/// Renders each leaf block to a standalone HTML page with the page templates.
public struct BlockRenderer: Sendable {
    /// Bumped whenever rendering changes what a page contains, so every block counts as changed.
    public static let version = "4"

    static let onlineOnlyReasons: [String: String] = [
        "discussion": "discussions need the network",
        "lti": "LTI tools need the network",
        "lti_consumer": "LTI tools need the network",
        "openassessment": "open response assessments are graded online",
        "drag-and-drop-v2": "drag and drop problems are graded online",
        "poll": "polls record votes online",
        "survey": "surveys record answers online",
        "done": "completion is recorded online",
        "edx_sga": "staff graded assignments are submitted online",
        "staffgradedxblock": "staff graded assignments are submitted online",
        "word_cloud": "word clouds gather answers online",
        "annotatable": "annotations are stored online",
    ]

    public let templates: PageTemplates
    public let generator: String

    public init(templates: PageTemplates, generator: String) {
        self.templates = templates
        self.generator = generator
    }

    /// Identifies everything that shapes a page besides the course itself.
    public var fingerprint: String { "\(Self.version)/\(templates.fingerprint)" }

    /// Renders `block`. `unitHead` holds the `<style>`, `<link>` and `<script>` elements of its
    /// unit's style-only components, which in the LMS apply to every component of the unit.
    public func render(_ block: Block, in course: Course, export: ExportDirectory, unitHead: [UInt8] = []) throws(RenderError) -> RenderResult {
        switch block.type {
        case "html":
            let (content, file) = try htmlContent(of: block, export: export)
            let processed = NetworkContent.process(content)
            var rendered = page(for: block, in: course, content: processed.html, unitHead: unitHead, contentFile: file, requiresNetwork: processed.requiresNetwork)
            rendered.runtime = RuntimeLibrary.needed(by: unitHead + processed.html, scripted: true)
            return .rendered(rendered)
        case "problem":
            switch ProblemRenderer(block: block).render() {
            case .html(let html):
                var rendered = page(for: block, in: course, content: Array(html.utf8), unitHead: unitHead, contentFile: block.file)
                rendered.files[ProblemRenderer.scriptFileName] = ProblemRenderer.scriptFile
                // The form's own script needs nothing; the unit's scripts may need jQuery.
                rendered.runtime = RuntimeLibrary.needed(by: unitHead, scripted: true).union(RuntimeLibrary.needed(by: Array(html.utf8), scripted: false))
                return .rendered(rendered)
            case .onlineOnly(let reason): return .onlineOnly(reason: reason)
            }
        case "video":
            switch VideoRenderer(block: block, course: course, export: export).render() {
            case .page(let output):
                var rendered = page(for: block, in: course, content: Array(output.html.utf8), unitHead: unitHead, contentFile: block.file, requiresNetwork: output.requiresNetwork)
                rendered.files.merge(output.files) { first, _ in first }
                rendered.runtime = RuntimeLibrary.needed(by: unitHead, scripted: true)
                return .rendered(rendered)
            case .onlineOnly(let reason): return .onlineOnly(reason: reason)
            }
        default:
            return .onlineOnly(reason: Self.onlineOnlyReasons[block.type] ?? "\(block.type) blocks are not supported offline")
        }
    }

    /// Whether the block gets an archive, decided before the build so links to blocks without one
    /// can point online instead of at a folder that will not exist. Problems and videos are
    /// rendered to know; other types are decided by their type.
    public func hasPage(_ block: Block, in course: Course, export: ExportDirectory) -> Bool {
        switch block.type {
        case "html": return true
        case "problem", "video":
            guard case .rendered = try? render(block, in: course, export: export) else { return false }
            return true
        default: return false
        }
    }

    /// The head elements of an html block that holds nothing but `<style>`, `<link>` and
    /// `<script>` elements (and comments): nil for any block with content a learner sees.
    /// `htmlFileBytes`: the bytes of the block's `htmlFile` as already read (nil when it has
    /// none or it could not be read): planning reads each file once, for the block's inputs
    /// and for this.
    public func styleOnlyElements(of block: Block, htmlFileBytes: [UInt8]?) -> [UInt8]? {
        guard block.type == "html" else { return nil }
        if block.htmlFile != nil {
            guard let htmlFileBytes else { return nil }
            return StyleOnlyContent.elements(Self.withoutBOM(htmlFileBytes))
        }
        return StyleOnlyContent.elements(Self.inlineContent(of: block))
    }

    func page(for block: Block, in course: Course, content: [UInt8], unitHead: [UInt8] = [], contentFile: String, requiresNetwork: [String] = []) -> RenderedBlock {
        let language = course.language.isEmpty ? "en" : course.language
        let fields = [
            "title": block.displayName ?? block.type,
            "language": language,
            "direction": Self.isRightToLeft(language) ? "rtl" : "ltr",
            "type": block.type,
            "generator": generator,
        ]
        return RenderedBlock(
            page: PageTemplates.insertIntoHead(unitHead, page: templates.page(fields, content: content)),
            files: [PageTemplates.stylesheetName: Array(templates.stylesheet.utf8)],
            requiresNetwork: requiresNetwork,
            contentFile: contentFile)
    }

    /// `<html filename="F"/>` keeps its HTML in a file (CourseExport finds which, as the LMS
    /// does); otherwise the HTML is the content of the block's element, whatever its name.
    func htmlContent(of block: Block, export: ExportDirectory) throws(RenderError) -> (bytes: [UInt8], file: String) {
        if let file = block.htmlFile {
            do {
                return (Self.withoutBOM(try export.read(file)), file)
            } catch {
                throw .missingContent(path: file, reason: "the content of \(block.usageID) cannot be read: \(error)")
            }
        }
        return (Self.inlineContent(of: block), block.file)
    }

    /// The HTML that is the content of the block's element, as written.
    static func inlineContent(of block: Block) -> [UInt8] {
        let range = block.definition.contentRange
        guard range.upperBound <= block.definitionSource.count else { return [] }
        return withoutBOM(Array(block.definitionSource[range]))
    }

    static func withoutBOM(_ bytes: [UInt8]) -> [UInt8] {
        bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
    }

    static func isRightToLeft(_ language: String) -> Bool {
        let primary = language.split(separator: "-").first.map { $0.lowercased() } ?? ""
        return ["ar", "he", "fa", "ur", "ps", "yi", "dv", "ku", "sd", "ug"].contains(primary)
    }
}
