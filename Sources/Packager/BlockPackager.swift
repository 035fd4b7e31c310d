import BlockRenderer
import Crypto
import CourseExport
import Foundation
import LinkRewriter
import Manifest
import ZipArchive

/// What happened to one block in a build.
enum BlockOutcome: Sendable {
    /// `stagedAt` is set when the archive was written beside the one the previous publish
    /// still names, to be swapped in once a manifest names the staged copy.
    case built(BlockEntry, stagedAt: String?, warnings: [Diagnostic])
    case reused(BlockEntry, warnings: [Diagnostic])
    case onlineOnly(BlockEntry)
    case failed(Diagnostic)
}

/// Packages one block: render, rewrite its links, gather its files, and write its archive
/// unless the previous publish already holds the same content.
struct BlockPackager: Sendable {
    let course: Course
    let export: ExportDirectory
    let renderer: BlockRenderer
    let assets: AssetStore
    let options: BuildOptions
    let previous: [String: BlockEntry]
    /// url_name or usage id → archive folder of the block a jump link lands on.
    let jumpTargets: [String: String]
    /// Archive paths the previous manifest names: these are never overwritten in place.
    let publishedArchives: Set<String>
    /// When the previous manifest was written. Every archive it names was in place before
    /// then; one changed since (ctime) is hashed before it is trusted.
    let previousManifestWritten: Int64?

    func package(_ block: Block) -> BlockOutcome {
        do {
            return try packageOrThrow(block)
        } catch {
            return .failed(Diagnostic(block: block.usageID, file: (error as? CourseError)?.path ?? block.file, message: "\(error)"))
        }
    }

    private func packageOrThrow(_ block: Block) throws -> BlockOutcome {
        let rendered: RenderedBlock
        switch try renderer.render(block, in: course, export: export) {
        case .onlineOnly(let reason):
            return .onlineOnly(BlockEntry(
                usageID: block.usageID, type: block.type, displayName: block.displayName,
                parents: block.parents, offline: false, reason: reason))
        case .rendered(let page):
            rendered = page
        }

        let archive = ArchiveNaming.archivePath(type: block.type, urlName: block.urlName)
        var warnings: [Diagnostic] = []
        var bundled = Set<String>()
        let page = LinkRewriter.rewrite(rendered.page, references: LinkRewriter.references(in: rendered.page, as: .html)) { reference in
            let (resolution, file, problem) = resolve(reference, generated: rendered.files)
            if let file { bundled.insert(file) }
            if let problem {
                warnings.append(Diagnostic(block: block.usageID, file: rendered.contentFile, message: problem, reference: reference.url))
            }
            return resolution
        }

        // Stylesheets pull in what they reference, and so on.
        var pending = Array(bundled)
        while let path = pending.popLast() {
            guard AssetStore.isStylesheet(path) else { continue }
            let sheet = try assets.stylesheet(path)
            for reference in sheet.unresolved {
                warnings.append(Diagnostic(block: block.usageID, file: "static/" + path, message: "unresolved reference in stylesheet", reference: reference))
            }
            for dependency in sheet.dependencies where bundled.insert(dependency).inserted {
                pending.append(dependency)
            }
        }

        var entries: [(name: String, hash: String, source: ZipEntry.Source)] = [
            ("index.html", Digest.hex(SHA256.hash(data: page)), .bytes(page))
        ]
        for (name, bytes) in rendered.files {
            entries.append((name, Digest.hex(SHA256.hash(data: bytes)), .bytes(bytes)))
        }
        for path in bundled.sorted() {
            entries.append(("static/" + path, try assets.contentHash(path), try assets.source(path)))
        }
        entries.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }

        var hasher = SHA256()
        hasher.update(data: Array("coursepack-content-v1\n\(renderer.fingerprint)\n".utf8))
        for entry in entries { hasher.update(data: Array("\(entry.name)\n\(entry.hash)\n".utf8)) }
        let contentHash = Digest.hex(hasher.finalize())
        let requiresNetwork = rendered.requiresNetwork.isEmpty ? nil : rendered.requiresNetwork

        let final = options.outputFolder + "/" + archive
        let before = previous[block.usageID]
        if let before, before.contentHash == contentHash, before.archive == archive,
            let size = before.size, let sha = before.sha256, let lastModified = before.lastModified,
            let stamp = FileStamp.of(final), stamp.size == size,
            stamp.changed < (previousManifestWritten ?? Int64.min) || (try? Digest.archive(final)) == sha
        {
            return .reused(BlockEntry(
                usageID: block.usageID, type: block.type, displayName: block.displayName, parents: block.parents,
                archive: archive, size: size, sha256: sha, contentHash: contentHash, lastModified: lastModified,
                requiresNetwork: requiresNetwork), warnings: warnings)
        }

        let staged = publishedArchives.contains(archive) ? Staging.stagedPath(of: archive, contentHash: contentHash) : nil
        // The type folders exist already: CoursePackager makes them before the workers start.
        let destination = options.outputFolder + "/" + (staged ?? archive)
        var archiveHasher = SHA256()
        let written = try assets.writer.write(entries.map { ZipEntry(name: $0.name, source: $0.source) }, to: destination) {
            archiveHasher.update(bufferPointer: $0)
        }
        let sha256 = written.observedAll ? Digest.hex(archiveHasher.finalize()) : try Digest.archive(destination)
        // An archive written again with the same content (it was missing or damaged) keeps the
        // date its content last changed: clients holding a good copy need not fetch it again.
        let contentLastChanged = (before?.contentHash == contentHash ? before?.lastModified : nil) ?? options.publishedAt
        return .built(BlockEntry(
            usageID: block.usageID, type: block.type, displayName: block.displayName, parents: block.parents,
            archive: archive, size: written.size, sha256: sha256, contentHash: contentHash,
            lastModified: contentLastChanged,
            requiresNetwork: requiresNetwork), stagedAt: staged, warnings: warnings)
    }

    /// What a reference in a page becomes: a bundled file, a link to another block's bundle, an
    /// absolute LMS link, or (when it cannot be resolved) itself, with the reason.
    private func resolve(_ reference: Reference, generated: [String: [UInt8]]) -> (LinkRewriter.Resolution, file: String?, problem: String?) {
        switch LinkTarget.classify(reference.url) {
        case .untouched:
            return (.keep, nil, nil)
        case .relative(let name, let suffix):
            // Only attributes hold links; a relative string in script text is not one.
            guard case .attribute = reference.context else { return (.keep, nil, nil) }
            if generated[name] != nil { return (.keep, nil, nil) }
            // Studio's older editors linked to another unit by its bare url_name.
            if let folder = jumpTargets[name] { return (Self.blockLink(folder, suffix, reference), nil, nil) }
            // Old pages sometimes name a static file without /static/.
            if let path = course.staticFiles.resolve(name) { return (Self.staticLink(path, suffix, reference), path, nil) }
            return (.keep, nil, "unresolved reference: a relative link that names no course file")
        case .asset(let name, let suffix):
            guard let path = course.staticFiles.resolve(name) else {
                return (.keep, nil, "unresolved reference: no file \"\(name)\" in the course's static files")
            }
            return (Self.staticLink(path, suffix, reference), path, nil)
        case .block(let id, let suffix):
            guard let folder = jumpTargets[id] else {
                return (.keep, nil, "unresolved reference: no block \"\(id)\" in the course")
            }
            return (Self.blockLink(folder, suffix, reference), nil, nil)
        case .lmsPath(let path):
            guard let base = options.lmsURL else {
                return (.keep, nil, "course link kept as written; pass --lms-url to make it absolute")
            }
            return (.replace(Self.escaped(base.trimmingTrailingSlashes() + path, in: reference)), nil, nil)
        }
    }

    /// A file of this bundle, under `static/`.
    private static func staticLink(_ path: String, _ suffix: String, _ reference: Reference) -> LinkRewriter.Resolution {
        .replace("static/" + PercentEncoding.encodePath(path) + escaped(suffix, in: reference))
    }

    /// Another block's page, from this block's `<type>/<name>/index.html`.
    private static func blockLink(_ folder: String, _ suffix: String, _ reference: Reference) -> LinkRewriter.Resolution {
        .replace("../../" + PercentEncoding.encodePath(folder) + "/index.html" + escaped(suffix, in: reference))
    }

    /// Query and fragment come back decoded from the scanner; inside HTML attributes `&` must
    /// be written as `&amp;` again.
    private static func escaped(_ text: String, in reference: Reference) -> String {
        guard case .attribute = reference.context else { return text }
        return text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
    }

}

extension String {
    func trimmingTrailingSlashes() -> String {
        var s = self
        while s.hasSuffix("/") { s.removeLast() }
        return s
    }
}
