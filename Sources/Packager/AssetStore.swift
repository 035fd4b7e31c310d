import FileSystem
import Crypto
import CourseExport
import Foundation
import IncrementalBuild
import LinkRewriter
import Synchronization
import ZipArchive

/// Per-build memory of the course's static files, shared by all workers: each file is hashed
/// once and each stylesheet rewritten once, however many blocks include it (each content is
/// then compressed once, by `CourseFileStore`).
final class AssetStore: Sendable {
    let export: ExportDirectory
    let course: Course
    let writer: ZipWriter
    /// Where every content of the build's archives is published once.
    let files: CourseFileStore
    private let hashes = Mutex<[String: String]>([:])
    private let stylesheets = Mutex<[String: RewrittenFile]>([:])
    private let pages = Mutex<[String: RewrittenFile]>([:])
    private let scripts = Mutex<[String: [String]]>([:])
    private let scriptData = Mutex<[String: ScriptLoadedFiles]>([:])
    private let previousHashes: FileHashCache
    private let stamps = Mutex<[String: FileHashCache.Record]>([:])

    init(export: ExportDirectory, course: Course, writer: ZipWriter, files: CourseFileStore, previousHashes: FileHashCache = FileHashCache()) {
        self.export = export
        self.course = course
        self.writer = writer
        self.files = files
        self.previousHashes = previousHashes
    }

    /// What this build learned, for the next one, with what the last one knew of files this
    /// build did not read (blocks it did not render): a record only answers while the file's
    /// stamp is unchanged, so keeping one is never wrong.
    var hashCache: FileHashCache {
        FileHashCache(writtenAt: 0, records: previousHashes.records.merging(stamps.withLock { $0 }) { _, new in new })
    }

    /// A bundled stylesheet or course page with its references rewritten relative to where it lands.
    struct RewrittenFile: Sendable {
        let bytes: [UInt8]
        let dependencies: [String]
        let unresolved: [String]
        /// Other sites it loads from (fonts, images, scripts, frames).
        var network: [String] = []
    }

    static func isStylesheet(_ path: String) -> Bool { path.lowercased().hasSuffix(".css") }

    /// A course page another page frames or links to (a simulation, a tool): bundled with what it
    /// references in turn.
    static func isPage(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".html") || lower.hasSuffix(".htm") || lower.hasSuffix(".xhtml")
    }

    static func isScript(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasSuffix(".js") || lower.hasSuffix(".mjs")
    }

    /// What a bundled script needs the network for: the sites it names, which it may fetch from
    /// when it runs, and `lms:static/<path>` when it only runs inside the LMS's own page (it reads
    /// the course id from the LMS URL or uses the LMS's event logger), so offline it stops.
    func scriptNeeds(_ staticPath: String) throws -> [String] {
        if let known = scripts.withLock({ $0[staticPath] }) { return known }
        let text = try export.read("static/" + staticPath)
        var needs = ExternalResource.origins(inScript: text)
        if ExternalResource.needsLMSPage(script: text) { needs.insert("lms:static/" + staticPath, at: 0) }
        scripts.withLock { $0[staticPath] = needs }
        return needs
    }

    /// The course files a bundled script loads by name (see ScriptLoadedFiles).
    func scriptLoadedFiles(_ staticPath: String) throws -> ScriptLoadedFiles {
        if let known = scriptData.withLock({ $0[staticPath] }) { return known }
        let text = try export.read("static/" + staticPath)
        var files = ScriptLoadedFiles()
        let folder = staticPath.lastIndex(of: "/").map { String(staticPath[..<$0]) } ?? ""
        files.add(namedIn: text[...], folder: folder, export: export)
        scriptData.withLock { $0[staticPath] = files }
        return files
    }

    func filePath(_ staticPath: String) throws -> String {
        try export.regularFile("static/" + staticPath)
    }

    /// SHA-256 of the file's bytes as they go into bundles (rewritten, for stylesheets).
    func contentHash(_ staticPath: String) throws -> String {
        if let known = hashes.withLock({ $0[staticPath] }) { return known }
        let digest: String
        if Self.isStylesheet(staticPath) {
            digest = SHA256Hex.of(try stylesheet(staticPath).bytes)
        } else if Self.isPage(staticPath) {
            digest = SHA256Hex.of(try page(staticPath).bytes)
        } else {
            let path = try filePath(staticPath)
            let stamp = FileStamp.of(path)
            if let stamp, let cached = previousHashes.hash(of: staticPath, stamp: stamp) {
                digest = cached
            } else {
                digest = try CourseFileDigest.sha256(path)
            }
            if let stamp {
                stamps.withLock { $0[staticPath] = FileHashCache.Record(stamp, sha256: digest) }
            }
        }
        hashes.withLock { $0[staticPath] = digest }
        return digest
    }

    /// The file's bytes as they go into bundles: rewritten for style sheets and framed pages,
    /// the course file itself (streamed) for everything else.
    func content(_ staticPath: String) throws -> CourseFileStore.Content {
        if Self.isStylesheet(staticPath) { return .bytes(try stylesheet(staticPath).bytes) }
        if Self.isPage(staticPath) { return .bytes(try page(staticPath).bytes) }
        return .file(path: try filePath(staticPath))
    }

    func stylesheet(_ staticPath: String) throws -> RewrittenFile {
        if let known = stylesheets.withLock({ $0[staticPath] }) { return known }
        let original = try export.read("static/" + staticPath)
        let folder = staticPath.split(separator: "/").dropLast().joined(separator: "/")
        var dependencies: [String] = []
        var unresolved: [String] = []
        var network: [String] = []
        let rewritten = LinkRewriter.rewrite(original, references: LinkRewriter.references(in: original, as: .css)) { reference in
            if let external = ExternalResource.of(reference) {
                network.append(external.url)
                return external.resolution
            }
            let target = LinkTarget.classify(reference.url)
            let found: String?
            switch target {
            case .asset(let name, _):
                found = course.staticFiles.resolve(name)
            case .relative(let path, _):
                // A relative url() inside a bundled stylesheet points next to it, inside static/.
                if let relative = RelativePath.resolve(path, from: folder), course.staticFiles.paths.contains(relative) {
                    dependencies.append(relative)
                }
                return .keep
            default:
                return .keep
            }
            guard let found else {
                unresolved.append(reference.url)
                return .keep
            }
            dependencies.append(found)
            let suffix: String
            if case .asset(_, let s) = target { suffix = s } else { suffix = "" }
            return .replace(RelativePath.link(to: found, from: folder) + suffix)
        }
        // A stylesheet names the same image in many rules; each file is bundled once.
        let sheet = RewrittenFile(
            bytes: rewritten, dependencies: Array(Set(dependencies)).sorted(), unresolved: Array(Set(unresolved)).sorted(),
            network: Self.unique(network))
        stylesheets.withLock { $0[staticPath] = sheet }
        return sheet
    }

    /// A course page bundled because a page frames or links to it, with its links rewritten
    /// relative to where it lands under `static/`, as the LMS would serve it.
    func page(_ staticPath: String) throws -> RewrittenFile {
        if let known = pages.withLock({ $0[staticPath] }) { return known }
        let original = try export.read("static/" + staticPath)
        let folder = staticPath.split(separator: "/").dropLast().joined(separator: "/")
        var dependencies: [String] = []
        var unresolved: [String] = []
        var network: [String] = []
        let rewritten = LinkRewriter.rewrite(original, references: LinkRewriter.references(in: original, as: .html)) { reference in
            if let external = ExternalResource.of(reference) {
                if reference.loadsResource { network.append(external.url) }
                return external.resolution
            }
            switch LinkTarget.classify(reference.url) {
            case .asset(let name, let suffix):
                guard let found = course.staticFiles.resolve(name) else {
                    unresolved.append(reference.url)
                    return .keep
                }
                dependencies.append(found)
                return .replace(RelativePath.link(to: found, from: folder) + reference.written(suffix))
            case .relative(let path, _):
                guard case .attribute = reference.context else { return .keep }
                if let relative = RelativePath.resolve(path, from: folder), course.staticFiles.paths.contains(relative) {
                    dependencies.append(relative)
                } else {
                    unresolved.append(reference.url)
                }
                return .keep
            default:
                return .keep
            }
        }
        network += ExternalResource.origins(inScript: original)
        let page = RewrittenFile(
            bytes: rewritten, dependencies: Array(Set(dependencies)).sorted(), unresolved: Array(Set(unresolved)).sorted(),
            network: Self.unique(network))
        pages.withLock { $0[staticPath] = page }
        return page
    }

    static func unique(_ items: [String]) -> [String] {
        var seen = Set<String>()
        return items.filter { seen.insert($0).inserted }
    }
}
