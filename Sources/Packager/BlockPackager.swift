import BlockRenderer
import Crypto
import CourseExport
import Diagnostics
import FileSystem
import Foundation
import IncrementalBuild
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
    /// `fromInputs` when the course itself is at fault (unreadable or unrenderable content),
    /// so the same inputs fail the same way; otherwise (writing the archive) it may pass next time.
    case failed(Diagnostic, fromInputs: Bool)
}

/// Packages one block: render, rewrite its links, gather its files, and write its archive
/// unless the previous publish already holds the same content.
struct BlockPackager: Sendable {
    let course: Course
    let export: ExportDirectory
    let renderer: BlockRenderer
    let assets: AssetStore
    let options: BuildOptions
    /// The publish already in the output folder: its entries, the archive paths it names (never
    /// overwritten in place) and when its manifest was written (every archive it names was in
    /// place before then; one changed since, by its ctime, is hashed before it is trusted).
    let previous: CoursePackager.PreviousPublish
    /// Where jump links land, which links point online, and each unit's style-only heads.
    let pages: PagePlan
    /// The shared runtime archive, when the system has its libraries.
    let runtime: PageRuntime?
    /// What each page is made from, and what the last build made from it.
    let inputs: BlockInputs
    let memos: BlockMemos<BlockNote>

    /// What packaging one block did.
    struct Packaged: Sendable {
        var outcome: BlockOutcome
        /// Digest of the block's inputs; nil when they could not be taken.
        var inputs: String?
        /// False when the block's inputs were unchanged and its page was not made again.
        var rendered: Bool
        /// The names the page's links looked up among the other blocks (`BlockInputs.digest`).
        var links: [String] = []
    }

    /// The block's page, made again only when what it is made from changed: its own inputs,
    /// its unit's style-only head, and where the links it looked up last time land now. Not
    /// every link in the course: adding, removing or failing one block then rendered every
    /// page of the course again (at 100,000 blocks, a minute).
    func package(_ block: Block) -> Packaged {
        let unitHead = pages.unitHeads[block.usageID] ?? []
        let remembered = memos[block.usageID]?.note.links ?? []
        let digest = inputs.digest(of: block, unitHead: unitHead, links: remembered)
        if let digest, let kept = rememberedEntry(of: block, inputs: digest) {
            return Packaged(outcome: .reused(kept.entry, warnings: kept.warnings).withPlace(of: block), inputs: digest, rendered: false, links: remembered)
        }
        if let digest, let online = rememberedOnlineOnly(of: block, inputs: digest) {
            return Packaged(outcome: .onlineOnly(online).withPlace(of: block), inputs: digest, rendered: false, links: remembered)
        }
        if let digest, let failure = rememberedFailure(of: block, inputs: digest) {
            return Packaged(outcome: .failed(failure, fromInputs: true), inputs: digest, rendered: false, links: remembered)
        }
        var links = LookedUpLinks()
        let outcome: BlockOutcome
        do {
            outcome = try packageOrThrow(block, lookingUp: &links).withPlace(of: block)
        } catch {
            let failure = Diagnostic(
                block: block.usageID, file: (error as? CourseError)?.path ?? block.file, message: "\(error)", id: (error as? Diagnosable)?.diagnosticID)
            outcome = .failed(failure, fromInputs: Self.failsAgainWithTheSameInputs(error))
        }
        let looked = links.recorded
        let made = looked == remembered ? digest : inputs.digest(of: block, unitHead: unitHead, links: looked)
        return Packaged(outcome: outcome, inputs: made, rendered: true, links: looked)
    }

    /// Whether the course is at fault, so that the same inputs fail the same way: content that
    /// cannot be read or rendered, or entries a client would refuse (too many, too large, badly
    /// named). A failed file call (a full disk) or zlib call may pass next time.
    static func failsAgainWithTheSameInputs(_ error: any Error) -> Bool {
        switch error {
        case is CourseError, is RenderError: true
        case let zip as ZipError: zip.refusesTheEntries
        default: false
        }
    }

    /// What a memo holds in place of a content hash for a block that failed for its inputs; its
    /// note holds the failure.
    static let failedMemo = "failed"

    /// The failure the last build found, without rendering, when the block's inputs are those
    /// its memo records. Such a block is otherwise made again by every build, and one that fails
    /// only once its archive is written (100,500 entries) took a minute each time.
    private func rememberedFailure(of block: Block, inputs: String) -> Diagnostic? {
        guard let memo = memos[block.usageID], memo.inputs == inputs, memo.contentHash == Self.failedMemo,
            memo.note.warnings.count == 1, let failure = memo.note.warnings.first, failure.block == block.usageID
        else { return nil }
        return failure
    }

    /// The previous publish's entry, without rendering, when the block's inputs are those its
    /// memo records, the manifest still lists the content the memo says they made, and the
    /// archive is intact.
    private func rememberedEntry(of block: Block, inputs: String) -> (entry: BlockEntry, warnings: [Diagnostic])? {
        guard let memo = memos[block.usageID], memo.inputs == inputs, let before = previous.entries[block.usageID],
            before.contentHash == memo.contentHash, before.offline != false, let archive = before.archive,
            let listing = before.files, before.unpackedSize != nil, assets.files.holds(listing),
            archive == ArchiveNaming.archivePath(type: block.type, urlName: block.urlName),
            let size = before.size, let sha = before.sha256, before.lastModified != nil,
            IncrementalBuild.archiveIsIntact(
                at: options.outputFolder + "/" + archive, size: size, sha256: sha, manifestWritten: previous.written)
        else { return nil }
        return (before, memo.note.warnings)
    }

    /// What a memo records as the content of an online-only block: it has no archive, and the
    /// manifest says why. The reason is recorded so that a memo older than the publish beside
    /// it (restored state, caches a power cut rolled back) cannot bring back another reason.
    static func onlineOnlyMemo(reason: String?) -> String { "online-only " + (reason ?? "") }

    /// The previous publish's online-only entry, without rendering, when the block's inputs are
    /// those its memo records and the manifest still lists it as online-only. A course of
    /// 100,000 blocks has thousands of them; rendering them all again made an edit's cost grow
    /// with the course.
    private func rememberedOnlineOnly(of block: Block, inputs: String) -> BlockEntry? {
        guard let memo = memos[block.usageID], memo.inputs == inputs, let before = previous.entries[block.usageID],
            before.offline == false, before.archive == nil, before.contentHash == nil, memo.contentHash == Self.onlineOnlyMemo(reason: before.reason)
        else { return nil }
        return before
    }

    /// `links`: receives every name the page's links look up among the other blocks.
    private func packageOrThrow(_ block: Block, lookingUp links: inout LookedUpLinks) throws -> BlockOutcome {
        var rendered: RenderedBlock
        switch try renderer.render(block, in: course, export: export, unitHead: pages.unitHeads[block.usageID] ?? []) {
        case .onlineOnly(let reason):
            return .onlineOnly(BlockEntry(
                usageID: block.usageID, type: block.type, displayName: block.displayName,
                parents: block.parents, offline: false, reason: reason))
        case .rendered(let page):
            rendered = page
        }
        var page = rewriteLinks(of: rendered, block: block, lookingUp: &links)
        try bundleDependencies(of: &page, block: block)
        carryScriptLoadedFiles(into: &page, files: &rendered.files, block: block)
        let libraries = insertRuntime(into: &page)
        let entries = try archiveEntries(page, rendered: rendered)
        let contentHash = Self.contentHash(of: entries, renderer: renderer)
        let (listing, unpackedSize) = try publishContents(entries)
        let archive = ArchiveNaming.archivePath(type: block.type, urlName: block.urlName)
        let needs = page.findings.network
        let warnings = page.findings.reported(block: block.usageID, file: rendered.contentFile)
        func entry(_ file: PublishedFile) -> BlockEntry {
            var entry = BlockEntry(
                usageID: block.usageID, type: block.type, displayName: block.displayName, parents: block.parents,
                archive: archive, size: file.size, sha256: file.sha256, contentHash: contentHash, lastModified: file.lastModified,
                requiresNetwork: needs.isEmpty ? nil : needs, runtime: libraries.isEmpty ? nil : runtime?.archivePath)
            entry.files = listing
            entry.unpackedSize = unpackedSize
            return entry
        }
        if let reused = reusedArchive(archive, of: block, contentHash: contentHash) {
            return .reused(entry(reused), warnings: warnings)
        }
        let (written, staged) = try writeArchive(entries, archive, of: block, contentHash: contentHash)
        return .built(entry(written), stagedAt: staged, warnings: warnings)
    }

    /// An archive in the output folder as the manifest lists it.
    struct PublishedFile {
        var size: UInt64
        var sha256: String
        /// When its content last changed.
        var lastModified: String
    }

    /// A page on its way into an archive: its bytes and what it was found to need.
    struct PageInProgress {
        var bytes: [UInt8]
        var libraries: Set<RuntimeLibrary>
        /// Static files (paths under static/) the archive carries.
        var bundled = Set<String>()
        /// What the page loads from the network, in the order found, and its warnings.
        var findings: PageFindings
        /// Course files its scripts load by name.
        var scriptLoaded = ScriptLoadedFiles()
    }

    /// Every reference in the page resolved: bundled files, links to other blocks, the LMS, or
    /// the online-only note; external loads are listed.
    private func rewriteLinks(of rendered: RenderedBlock, block: Block, lookingUp links: inout LookedUpLinks) -> PageInProgress {
        var findings = PageFindings(network: rendered.requiresNetwork)
        var bundled = Set<String>()
        var linksOnlineOnly = false
        var bytes = LinkRewriter.rewrite(rendered.page, references: LinkRewriter.references(in: rendered.page, as: .html)) { reference in
            if let external = ExternalResource.of(reference) {
                if reference.loadsResource { findings.addNetwork(CollectionOfOne(external.url)) }
                return external.resolution
            }
            var (resolution, file, problem) = resolve(reference, generated: rendered.files, lookingUp: &links)
            // A link the learner follows that cannot be made to work offline says so on the page
            // instead of opening a missing local file; it is still reported.
            if problem != nil, resolution == .keep, Self.isNavigation(reference) { resolution = .replace(Self.onlineOnlyAnchor) }
            if let file { bundled.insert(file) }
            if let (id, problem) = problem {
                findings.warn(Diagnostic(block: block.usageID, file: rendered.contentFile, message: problem, reference: reference.url, id: id))
            }
            if case .replace(let link) = resolution, link.hasPrefix(Self.onlineOnlyAnchor) { linksOnlineOnly = true }
            return resolution
        }
        if linksOnlineOnly { bytes = Self.withOnlineOnlyNote(bytes) }
        return PageInProgress(bytes: bytes, libraries: rendered.runtime, bundled: bundled, findings: findings)
    }

    /// Stylesheets and framed course pages pull in what they reference, and so on; a chain of
    /// pages is followed only so deep.
    private func bundleDependencies(of page: inout PageInProgress, block: Block) throws {
        var pending = page.bundled.sorted().reversed().map { ($0, 0) }
        while let (path, depth) = pending.popLast() {
            let dependencies: [String]
            if AssetStore.isStylesheet(path) {
                let sheet = try assets.stylesheet(path)
                page.findings.warn(each: sheet.unresolved) {
                    Diagnostic(block: block.usageID, file: "static/" + path, message: "unresolved reference in stylesheet", reference: $0, id: .linkNamesNoFile)
                }
                page.findings.addNetwork(sheet.network)
                dependencies = sheet.dependencies
            } else if AssetStore.isPage(path), depth < Self.maximumPageDepth {
                let framed = try assets.page(path)
                page.findings.warn(each: framed.unresolved) {
                    Diagnostic(block: block.usageID, file: "static/" + path, message: "unresolved reference in a bundled page", reference: $0, id: .linkNamesNoFile)
                }
                page.findings.addNetwork(framed.network)
                dependencies = framed.dependencies
            } else if AssetStore.isScript(path) {
                page.findings.addNetwork(try assets.scriptNeeds(path))
                page.scriptLoaded.formUnion(try assets.scriptLoadedFiles(path))
                continue
            } else {
                continue
            }
            for dependency in dependencies where page.bundled.insert(dependency).inserted {
                pending.append((dependency, depth + 1))
            }
        }
    }

    /// The course files the page's scripts load by name go inside a generated script that the
    /// page loads before its own, so they load from file:// too.
    private func carryScriptLoadedFiles(into page: inout PageInProgress, files: inout [String: [UInt8]], block: Block) {
        page.scriptLoaded.add(inlineScriptsOf: page.bytes, export: export)
        guard !page.scriptLoaded.isEmpty else { return }
        let carried = page.scriptLoaded.script(export: export)
        for path in carried.tooLarge {
            page.findings.warn(Diagnostic(
                block: block.usageID, file: "static/" + path,
                message: "a script loads this file by name, and it is too large (over \(ScriptLoadedFiles.fileLimit >> 20) MiB, or the page's files over \(ScriptLoadedFiles.pageLimit >> 20) MiB) to carry inside the page: the page opened from file:// cannot load it",
                reference: path))
        }
        guard let bytes = carried.bytes else { return }
        files[ScriptLoadedFiles.scriptName] = bytes
        let element = Array("<script src=\"\(ScriptLoadedFiles.scriptName)\"></script>\n".utf8)
        page.bytes = PageTemplates.insertBeforeScripts(element, page: page.bytes)
    }

    /// The runtime's elements the page needs, before its first script; without the runtime
    /// packages the page still works online, and says so. Returns the libraries it loads locally.
    private func insertRuntime(into page: inout PageInProgress) -> Set<RuntimeLibrary> {
        guard !page.libraries.isEmpty else { return [] }
        guard let runtime else {
            page.findings.addNetwork(page.libraries.sorted().map(\.networkName))
            return []
        }
        page.bytes = PageTemplates.insertBeforeScripts(runtime.elements(for: page.libraries), page: page.bytes)
        return page.libraries
    }

    /// One file of the block's folder: its path there, the SHA-256 of its bytes, and the bytes.
    typealias ArchiveEntry = (name: String, hash: String, content: CourseFileStore.Content)

    /// The page, the renderer's generated files and the bundled static files, in name order.
    private func archiveEntries(_ page: PageInProgress, rendered: RenderedBlock) throws -> [ArchiveEntry] {
        var entries: [ArchiveEntry] = [("index.html", SHA256Hex.of(page.bytes), .bytes(page.bytes))]
        for (name, bytes) in rendered.files {
            entries.append((name, SHA256Hex.of(bytes), .bytes(bytes)))
        }
        for path in page.bundled.sorted() {
            entries.append(("static/" + path, try assets.contentHash(path), try assets.content(path)))
        }
        entries.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        return entries
    }

    /// Each of the folder's contents published under `files/` (once per build, whatever number
    /// of blocks hold it): the folder's listing and its exact unpacked size.
    private func publishContents(_ entries: [ArchiveEntry]) throws -> (FileListing, UInt64) {
        var listing = FileListing()
        var size: UInt64 = 0
        for entry in entries {
            size += try assets.files.publish(entry.content, sha256: entry.hash).size
            listing[entry.name] = assets.files.sharedName(entry.hash)
        }
        return (listing, size)
    }

    /// What the archive holds, independent of how it is compressed: equal hashes, equal pages.
    static func contentHash(of entries: [ArchiveEntry], renderer: BlockRenderer) -> String {
        var hasher = SHA256()
        hasher.update(data: Array("coursepack-content-v1\n\(renderer.fingerprint)\n".utf8))
        for entry in entries { hasher.update(data: Array("\(entry.name)\n\(entry.hash)\n".utf8)) }
        return SHA256Hex.hex(hasher.finalize())
    }

    /// The previous publish's archive, when it holds the same content, is intact, and is one the
    /// clients' limits in force still accept. A block comes here when its memo no longer
    /// matches, as after the limits were lowered (`COURSEPACK_LOWER_LIMITS`, a part of every
    /// memo's settings): an archive the old limits let through is then written again, and
    /// refused (CP314) if it is past the new ones, rather than kept for every client to refuse.
    private func reusedArchive(_ archive: String, of block: Block, contentHash: String) -> PublishedFile? {
        let path = options.outputFolder + "/" + archive
        guard let before = previous.entries[block.usageID], before.contentHash == contentHash, before.archive == archive,
            let size = before.size, let sha = before.sha256, let lastModified = before.lastModified,
            IncrementalBuild.archiveIsIntact(at: path, size: size, sha256: sha, manifestWritten: previous.written),
            // Its central directory only, with the check a client makes before it unpacks.
            (try? ZipReader(path: path, limits: assets.writer.limits)) != nil
        else { return nil }
        return PublishedFile(size: size, sha256: sha, lastModified: lastModified)
    }

    /// Writes the archive, hashing it as it goes; beside the published one (staged) when the
    /// previous manifest names that path, since a manifest must never name changing bytes.
    private func writeArchive(
        _ entries: [ArchiveEntry], _ archive: String, of block: Block, contentHash: String
    ) throws -> (PublishedFile, staged: String?) {
        let staged = previous.archives.contains(archive) ? Staging.stagedPath(of: archive, contentHash: contentHash) : nil
        // The type folders exist already: CoursePackager makes them before the workers start.
        let destination = options.outputFolder + "/" + (staged ?? archive)
        var archiveHasher = SHA256()
        // Every entry is copied from its published content: nothing is compressed again.
        let zipEntries = try entries.map { ZipEntry(name: $0.name, source: try assets.files.source(of: $0.hash)) }
        let written = try assets.writer.write(zipEntries, to: destination) {
            archiveHasher.update(bufferPointer: $0)
        }
        let sha256 = written.observedAll ? SHA256Hex.hex(archiveHasher.finalize()) : try CourseFileDigest.archive(destination)
        // An archive written again with the same content (it was missing or damaged) keeps the
        // date its content last changed: clients holding a good copy need not fetch it again.
        let before = previous.entries[block.usageID]
        let lastChanged = (before?.contentHash == contentHash ? before?.lastModified : nil) ?? options.publishedAt.text
        return (PublishedFile(size: written.size, sha256: sha256, lastModified: lastChanged), staged)
    }

    /// What a reference in a page becomes: a bundled file, a link to another block's bundle, an
    /// absolute LMS link, or (when it cannot be resolved) itself, with the reason.
    /// `links` receives each name looked up in the plan's jump and online targets, found or not.
    private func resolve(
        _ reference: Reference, generated: [String: [UInt8]], lookingUp links: inout LookedUpLinks
    ) -> (LinkRewriter.Resolution, file: String?, problem: (DiagnosticID, String)?) {
        switch LinkTarget.classify(reference.url) {
        case .untouched:
            return (.keep, nil, nil)
        case .relative(let name, let suffix):
            // Only attributes hold links; a relative string in script text is not one.
            guard case .attribute = reference.context else { return (.keep, nil, nil) }
            if generated[name] != nil { return (.keep, nil, nil) }
            links.insert(name)
            // Studio's older editors linked to another unit by its bare url_name.
            if let folder = pages.jumpTargets[name] { return (Self.blockLink(folder, suffix, reference), nil, nil) }
            if let usageID = pages.onlineTargets[name] { return (onlineLink(usageID, reference), nil, nil) }
            // Old pages sometimes name a static file without /static/.
            if let path = course.staticFiles.resolve(name) { return (Self.staticLink(path, suffix, reference), path, nil) }
            return (.keep, nil, (.linkNamesNoFile, "unresolved reference: a relative link that names no course file"))
        case .asset(let name, let suffix):
            guard let path = course.staticFiles.resolve(name) else {
                return (.keep, nil, (.linkNamesNoFile, "unresolved reference: no file \"\(name)\" in the course's static files"))
            }
            return (Self.staticLink(path, suffix, reference), path, nil)
        case .block(let id, let suffix):
            links.insert(id)
            if let usageID = pages.onlineTargets[id] { return (onlineLink(usageID, reference), nil, nil) }
            guard let folder = pages.jumpTargets[id] else {
                return (.keep, nil, (.linkNamesNoBlock, "unresolved reference: no block \"\(id)\" in the course"))
            }
            return (Self.blockLink(folder, suffix, reference), nil, nil)
        case .lmsPath(let path):
            guard let base = options.lmsURL else {
                return (.keep, nil, (.courseLinkNeedsLMS, "course link kept as written; pass --lms-url to make it absolute"))
            }
            return (.replace(Self.escaped(base.trimmingTrailingSlashes() + path, in: reference)), nil, nil)
        }
    }

    /// A page's chain of framed course pages (a page framing a page framing …) is bundled this deep.
    static let maximumPageDepth = 8

    static let onlineOnlyAnchor = "#coursepack-online-only"

    /// A link to a block that has no archive: its LMS page with `--lms-url`, otherwise a note on
    /// this page saying the part is online only (never a local path that will not exist).
    private func onlineLink(_ usageID: String, _ reference: Reference) -> LinkRewriter.Resolution {
        guard let base = options.lmsURL else { return .replace(Self.onlineOnlyAnchor) }
        return .replace(Self.escaped(base.trimmingTrailingSlashes() + "/courses/\(course.id)/jump_to/\(usageID)", in: reference))
    }

    static func isNavigation(_ reference: Reference) -> Bool {
        reference.context == .attribute("href") && (reference.element == "a" || reference.element == "area")
    }

    /// The note `#coursepack-online-only` links open (the stylesheet shows it when targeted).
    static func withOnlineOnlyNote(_ page: [UInt8]) -> [UInt8] {
        let note = Array("<p id=\"coursepack-online-only\" class=\"coursepack-online-only coursepack-online-note\" role=\"note\">This link leads to a part of the course that is available online only: open the course online to follow it.</p>\n".utf8)
        return PageTemplates.insertBeforeBodyEnd(note, page: page)
    }

    /// A file of this bundle, under `static/`.
    private static func staticLink(_ path: String, _ suffix: String, _ reference: Reference) -> LinkRewriter.Resolution {
        .replace("static/" + PercentEncoding.encodePath(path) + escaped(suffix, in: reference))
    }

    /// Another block's page, from this block's `<type>/<name>/index.html`.
    private static func blockLink(_ folder: String, _ suffix: String, _ reference: Reference) -> LinkRewriter.Resolution {
        .replace("../../" + PercentEncoding.encodePath(folder) + "/index.html" + escaped(suffix, in: reference))
    }

    private static func escaped(_ text: String, in reference: Reference) -> String {
        reference.written(text)
    }

}

extension String {
    func trimmingTrailingSlashes() -> String {
        var s = self
        while s.hasSuffix("/") { s.removeLast() }
        return s
    }
}
