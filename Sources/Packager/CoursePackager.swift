import BlockRenderer
import CourseExport
import Diagnostics
import FileSystem
import Foundation
import IncrementalBuild
import Manifest
import ParallelMap
import ZipArchive

/// The publish pipeline: load the course → render and archive each block (in parallel) →
/// write the manifest last → remove what the course no longer has.
public struct CoursePackager: Sendable {
    public let options: BuildOptions

    public init(options: BuildOptions) {
        self.options = options
    }

    /// Builds `coursePath` into the output folder. Throws only when nothing could be done (and
    /// nothing was changed); per-block failures are in the report.
    public func build(coursePath: String, progress: @Sendable (Int, Int) -> Void = { _, _ in }) throws(BuildError) -> BuildReport {
        let started = Date()
        let renderer = BlockRenderer(templates: options.templates, generator: options.generator)
        let incremental = IncrementalBuild(outputFolder: options.outputFolder, stateFolder: options.stateFolder, now: options.now)
        // The course is stamped as of now, before anything is read: a file changed after this
        // moment makes the stamp unsettled, whenever the walk itself runs. With a previous record
        // the stamp decides whether there is anything to do; without one it is only needed at
        // the end, and is walked while the manifest is written, when a core is free.
        let since = options.now()
        let settings = inputSettings(renderer: renderer)
        let workers = options.jobs
        let stampCourse: @Sendable (_ collectsPlainFiles: Bool) -> IncrementalBuild.Inputs? = { collects in
            incremental.stampInputs(coursePath: coursePath, settings: settings, since: since, workers: workers, collectsPlainFiles: collects)
        }
        var stampedInputs: Background<IncrementalBuild.Inputs?>?
        // What the walk that checks the course saw of each file, so that the load and the block
        // inputs need not `lstat` them again (the export holds them for the build).
        var walkedFiles = PlainFileStamps.none
        if incremental.hasRecord {
            let (unchanged, inputs) = unchangedBuild(incremental, started: started) { stampCourse(true) }
            if let unchanged { return unchanged }
            var kept = inputs
            walkedFiles = kept?.plainFiles ?? .none
            kept?.plainFiles = .none
            stampedInputs = Background(finished: kept)
        }

        // A rebuild reads the previous publish while the course loads: the walk of the course is
        // on one core, and at 100,000 blocks each took more than a second. Under the lock, so no
        // other build replaces the manifest meanwhile; only where the output folder exists (the
        // lock creates it), and with one job after the course, on the build's one thread.
        let earlyLock = try options.jobs > 1 && FileManager.default.fileExists(atPath: options.outputFolder) ? lockOutput() : nil
        let readEarly = earlyLock.map { _ in Background { (manifest: self.readPreviousManifest(), memos: incremental.loadBlockMemos(as: BlockNote.self)) } }
        let keptFiles = KeptBlockFiles.load(from: options.stateFolder)
        let (course, export) = try openCourse(coursePath, known: keptFiles, stamps: walkedFiles)
        defer { export.close() }
        let loaded = Date()
        let lock: FileLock
        if let earlyLock { lock = earlyLock } else { lock = try lockOutput() }
        defer { withExtendedLifetime(lock) {} }
        var report = BuildReport(courseID: course.id, publishedAt: options.publishedAt.text, outputFolder: options.outputFolder)
        report.counts.blockFilesRead = course.readBlockFiles.lazy.filter(\.fromDisk).count
        var phase = PhaseClock(from: loaded)
        let early = readEarly?.value
        let previous = try checkOutput(for: course, read: early?.manifest ?? readPreviousManifest())
        // A cache, saved (when it changed) while the blocks are built, once the checks let the build
        // change the state folder.
        let filesKept = Background.onAnotherCore(if: options.jobs > 1) {
            if export.temporaryFolder == nil, KeptBlockFiles.differs(course.readBlockFiles, from: keptFiles) {
                KeptBlockFiles.save(course.readBlockFiles, root: export.directory.root, to: self.options.stateFolder, writtenAt: since)
            }
        }
        // What the last build left of each block, read before `startChanging` forgets it.
        let memos = early?.memos ?? incremental.loadBlockMemos(as: BlockNote.self)
        startChanging(incremental, previous: previous)
        report.durations.previousSeconds = phase.lap()

        let blocks = packageCourse(
            course, export: export.directory, renderer: renderer, previous: previous, settings: settings,
            previousHashes: incremental.loadFileHashes(), memos: memos, progress: progress, phase: &phase, into: &report)
        // One job means one thread, however many cores there are.
        let pendingInputs = stampedInputs ?? Background.onAnotherCore(if: options.jobs > 1) { stampCourse(false) }
        // Rendering and archiving freed most of what they took, in every worker's arena.
        FreedMemory.returnToSystem()
        var collected = collect(blocks.packaged.lazy.map(\.outcome), of: blocks.leaves, course: course, previous: previous, into: &report)
        let (manifest, search) = try composeManifest(
            of: course, export: export.directory, renderer: renderer, blocks: blocks, previous: previous.manifest,
            collected: &collected, report: &report)
        // What only the next build reads (the search step's caches, the block memos, the file
        // hashes) is written on another core while the manifest is encoded and made durable,
        // work that runs on one: with two jobs, that tail was a sixth of a text course's build.
        // None of it names anything a reader of the output follows, so it may land before the
        // manifest does; the build's record, which vouches for it all, is written last.
        let stateSaved = Background.onAnotherCore(if: options.jobs > 1) {
            search.saveCaches(to: self.options.stateFolder)
            self.saveState(incremental, blocks: blocks, readSince: since)
        }
        let writtenIndex = try writeManifest(
            manifest, previous: previous, staged: collected.staged, writtenFolders: collected.writtenFolders,
            pending: blocks.assets.writer.pendingSyncs, report: &report)
        report.durations.manifestSeconds = phase.lap()
        stateSaved.value
        filesKept.value
        report.counts.removed = removeUnnamedArchives(previous: previous.archives, manifest: manifest)
        CourseFileRemoval.removeUnnamed(in: options.outputFolder, manifest: manifest)
        ManifestWrite.removeUnnamedParts(in: options.outputFolder, keeping: writtenIndex)
        record(&report, in: incremental, inputs: pendingInputs, clean: !collected.failedWhileWriting, started: started, loaded: loaded)
        report.durations.finishSeconds = phase.lap()
        if !options.freesMemoryWhenDone { LeftForExit.keep((course, blocks, manifest, previous, memos, collected, writtenIndex)) }
        return report
    }

    /// From here the output may change; the state describes it again only once it is final.
    private func startChanging(_ incremental: IncrementalBuild, previous: PreviousPublish) {
        incremental.forget()
        removeTemporaryLeftovers(in: options.outputFolder, keeping: previous.archives)
    }

    /// The build's durations, and the build recorded for the next one to compare with, unless a
    /// block failed for want of disk space or the like (it is tried again next time).
    private func record(
        _ report: inout BuildReport, in incremental: IncrementalBuild, inputs: Background<IncrementalBuild.Inputs?>, clean: Bool,
        started: Date, loaded: Date
    ) {
        if let inputs = inputs.value, clean {
            incremental.record(RecordedBuild(report), inputs: inputs, workers: options.jobs)
        }
        report.durations.record(started: started, loaded: loaded, finished: Date())
    }

    /// The blocks rendered and archived, with what the later steps need of that step.
    struct PackagedBlocks {
        let leaves: [Block]
        let packaged: [BlockPackager.Packaged]
        let assets: AssetStore
        let runtime: PageRuntime?
        /// The hash cache as the build found it: saved again only when it changed.
        let previousHashes: FileHashCache
        /// Whether each problem and video has a page, when it differs from what was remembered.
        let pageFacts: PageFacts?
        /// What was found of the html files, when it differs from what was remembered.
        let htmlFiles: HTMLFileFacts?
    }

    /// Every check that can refuse the build, before anything in DIR or the state changes: the
    /// previous publish, links among DIR's folders, the state folder's place.
    private func checkOutput(for course: Course, read: Result<PublishedManifest?, BuildError>) throws(BuildError) -> PreviousPublish {
        let previous = try previousPublish(of: course, read: try read.get())
        try refuseLinkedFolders(in: options.outputFolder)
        try prepareStateFolder()
        return previous
    }

    /// Loads the page runtime (a warning when it is not installed) and renders and archives
    /// every leaf block.
    private func packageCourse(
        _ course: Course, export: ExportDirectory, renderer: BlockRenderer, previous: PreviousPublish, settings: [String],
        previousHashes: FileHashCache, memos: BlockMemos<BlockNote>, progress: @Sendable (Int, Int) -> Void,
        phase: inout PhaseClock, into report: inout BuildReport
    ) -> PackagedBlocks {
        let writer = ZipWriter(level: options.compressionLevel, pendingSyncs: PendingSyncs())
        let files = CourseFileStore(
            outputFolder: options.outputFolder, level: options.compressionLevel, pendingSyncs: writer.pendingSyncs,
            previous: previous.manifest?.files ?? [:], previousWritten: previous.written)
        let assets = AssetStore(export: export, course: course, writer: writer, files: files, previousHashes: previousHashes)
        let (runtime, runtimeMissing) = PageRuntime.load(from: options.runtimeSource)
        if let missing = runtimeMissing.first {
            report.warnings.append(Diagnostic(
                block: course.id, file: missing,
                message: "the page runtime (jQuery, math) is not installed (\(PageRuntime.requiredPackages)): pages that need it list it in requires_network",
                id: .runtimeNotInstalled))
        }
        let leaves = course.blocks.filter { !$0.isContainer }
        let (packaged, pages, htmlFiles) = packageBlocks(
            leaves, of: course, export: export, renderer: renderer, assets: assets, runtime: runtime,
            previous: previous, settings: settings, memos: memos, progress: progress, phase: &phase, into: &report)
        report.durations.blocksSeconds = phase.lap()
        report.counts.rendered = packaged.count { $0.rendered }
        return PackagedBlocks(
            leaves: leaves, packaged: packaged, assets: assets, runtime: runtime, previousHashes: previousHashes,
            pageFacts: pages.factsChanged ? pages.facts : nil, htmlFiles: htmlFiles)
    }

    /// The new manifest: the collected entries, the outline, and the shared archives (written
    /// here when new). An unchanged manifest keeps the previous publish time, so it stays
    /// byte-identical.
    private func composeManifest(
        of course: Course, export: ExportDirectory, renderer: BlockRenderer, blocks: PackagedBlocks, previous: CourseManifest?,
        collected: inout CollectedOutcomes, report: inout BuildReport
    ) throws(BuildError) -> (CourseManifest, searchCaches: SearchIndexStep) {
        var manifest = CourseManifest(courseID: course.id, publishedAt: options.publishedAt.text, generator: options.generator, blocks: collected.entries)
        // The entries move into the manifest: a second array of 100,000 entries is 40 MB.
        collected.entries = []
        for index in manifest.blocks.indices { manifest.blocks[index].downloadURL(base: options.publicURL ?? "") }
        manifest.outline = course.blocks.filter(\.isContainer).map {
            OutlineEntry(usageID: $0.usageID, type: $0.type, displayName: $0.displayName, children: $0.children)
        }
        let (writer, store) = (blocks.assets.writer, blocks.assets.files)
        // The runtime is published only when some page loads it.
        if let runtime = blocks.runtime, manifest.blocks.lazy.compactMap(\.runtime).first == runtime.archivePath {
            try publishShared(runtime.shared, in: &manifest, previous: previous, writer: writer, store: store, written: &collected.writtenFolders)
        }
        let searchStarted = Date()
        // The index's parts are let go once published, its texts and pieces once cached for the
        // next build (a cache by content, which no later failure makes wrong): at 100,000 pages
        // they are the course's whole text, two or three times over.
        var search = try searchIndex(of: course, export: export, renderer: renderer, entries: manifest.blocks)
        report.counts.searchTextsRead = search.extracted
        try publishShared(search.shared, in: &manifest, previous: previous, writer: writer, store: store, written: &collected.writtenFolders)
        // Published: the parts' bytes go, back to the system, before the caches are written
        // (at 100,000 blocks, 42 MB at the build's peak).
        search.files = []
        FreedMemory.returnToSystem()
        report.durations.searchSeconds = Date().timeIntervalSince(searchStarted)
        manifest.files = Self.listedContents(of: &manifest, published: blocks.assets.files.contents, previous: previous)
        collected.writtenFolders.formUnion(blocks.assets.files.writtenFolders)
        if let previous, previous.blocks == manifest.blocks, previous.outline == manifest.outline, previous.search == manifest.search,
            previous.files == manifest.files
        {
            manifest.publishedAt = previous.publishedAt
        }
        return (manifest, search)
    }

    /// What the next build reuses: file hashes, block memos, page facts (the search step
    /// saved its own). The caches that vouch for files by their stamps are dated `readSince`,
    /// when the build began reading: a file changed after its stamp was taken, within the same
    /// tick of a coarse clock, has a stamp no older than that, and is read again next time.
    private func saveState(_ incremental: IncrementalBuild, blocks: PackagedBlocks, readSince: Int64) {
        let hashes = blocks.assets.hashCache
        if hashes.records != blocks.previousHashes.records { incremental.save(hashes, readSince: readSince) }
        incremental.save(Self.memos(of: blocks.packaged))
        blocks.pageFacts?.save(to: options.stateFolder)
        blocks.htmlFiles?.save(to: options.stateFolder, writtenAt: readSince)
    }

    /// The id of a problem the course export reports, once its problems carry one.
    static func diagnosticID(of problem: Any) -> DiagnosticID? {
        (problem as? Diagnosable)?.diagnosticID
    }

    /// Everything besides the course that the output depends on: the program, its templates and
    /// runtime, and every option that changes a byte.
    private func inputSettings(renderer: BlockRenderer) -> [String] {
        [
            Version.current, renderer.fingerprint + "/" + SearchIndexStep.fingerprint + "/" + PageRuntime.stamp(of: options.runtimeSource),
            options.lmsURL ?? "-", "\(options.compressionLevel)", options.generator, BlockNote.format, options.publicURL ?? "-",
            // Whether manifest.json is written, which archives are refused and which course files
            // are left out depend on the clients' limits.
            "limits " + ArchiveLimits.current.fingerprint + "," + ManifestLimits.current.fingerprint,
        ]
    }

    /// The report of a build whose course, options, program and output are all exactly as the
    /// last clean build left them (nil when anything differs or cannot be checked), and the
    /// course's stamp, which a full build needs too.
    private func unchangedBuild(
        _ incremental: IncrementalBuild, started: Date, stampCourse: () -> IncrementalBuild.Inputs?
    ) -> (BuildReport?, IncrementalBuild.Inputs?) {
        guard let lock = try? lockOutput() else { return (nil, stampCourse()) }
        return withExtendedLifetime(lock) {
            let (recorded, inputs) = incremental.unchangedSummary(as: RecordedBuild.self, workers: options.jobs, inputs: stampCourse)
            guard let recorded else { return (nil, inputs) }
            var report = recorded.report(publishedAt: options.publishedAt.text, outputFolder: options.outputFolder)
            report.durations.totalSeconds = Date().timeIntervalSince(started)
            return (report, inputs)
        }
    }

    private func openCourse(_ coursePath: String, known: KeptBlockFiles, stamps: PlainFileStamps) throws(BuildError) -> (Course, OpenedExport) {
        do {
            return try CourseLoader.open(
                coursePath, workers: options.jobs, largestStaticFile: ArchiveLimits.current.maximumCourseFileSize, known: known,
                stamps: stamps)
        } catch {
            throw .course(error)
        }
    }

    /// The output folder, made if needed and locked (`flock` on the folder itself), so two
    /// builds into one folder never interleave, whatever state folder each uses, and no lock
    /// file is published.
    private func lockOutput() throws(BuildError) -> FileLock {
        let out = options.outputFolder
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            throw .output(path: out, reason: "cannot create the output folder")
        }
        guard access(out, W_OK) == 0 else { throw .output(path: out, reason: "the output folder is not writable") }
        do {
            return try FileLock(.folder(out), waiting: .seconds(options.lockTimeout))
        } catch .busy {
            throw .busy(path: out, waited: options.lockTimeout)
        } catch {
            throw .output(path: out, reason: "\(error)")
        }
    }

    /// The publish already in the output folder: its manifest and the archives it names.
    struct PreviousPublish: Sendable {
        let manifest: CourseManifest?
        /// How the folder holds it (`manifest.json`, the index and its bytes).
        let published: PublishedManifest?
        let archives: Set<String>
        let entries: EntriesByUsageID
        /// When the manifest was written: every archive it names was in place before then.
        let written: Int64?
    }

    /// The manifest the output folder holds, as read; nil when there is none.
    private func readPreviousManifest() -> Result<PublishedManifest?, BuildError> {
        do {
            return .success(try PublishedManifest.read(folder: options.outputFolder, workers: options.jobs))
        } catch {
            return .failure(.previousManifest(error))
        }
    }

    /// Reads the previous manifest, refusing a corrupt or newer one, another course's, or one
    /// naming anything but `<type>/<name>.zip`: the build deletes what it names, so it is
    /// checked as strictly as a server's manifest before anything it names is touched.
    /// Without `manifest.json` (a course too large for it), the index and its parts are the
    /// previous publish; a part missing or not what the index names is refused like a broken
    /// manifest, naming the part.
    private func previousPublish(of course: Course, read published: PublishedManifest?) throws(BuildError) -> PreviousPublish {
        let out = options.outputFolder
        let previous = published?.manifest
        let manifestPath = out + "/" + (published?.hasWholeFile == false ? ManifestIndex.fileName : PublishedManifest.wholeFileName)
        if let previous, previous.courseID != course.id {
            throw .output(path: manifestPath, reason: "belongs to \(previous.courseID), not \(course.id); use another --out")
        }
        let archives = Set((previous?.blocks ?? []).compactMap(\.archive) + (previous?.sharedArchives ?? []).map(\.archive))
        if let key = (previous?.files ?? [:]).keys.filter({ !CourseFile.isContentKey($0) }).min() {
            throw .output(path: manifestPath, reason: "names \"\(key)\" as a content, which is not a SHA-256 key; refusing to touch what it names")
        }
        if let unsafe = archives.filter({ !Staging.isPublishable($0) }).min() {
            throw .output(path: manifestPath, reason: "names \"\(unsafe)\" as an archive, which is not of the form <type>/<name>.zip; refusing to touch what it names")
        }
        return PreviousPublish(
            manifest: previous, published: published, archives: archives,
            entries: EntriesByUsageID(previous?.blocks ?? []),
            written: FileStamp.of(manifestPath)?.modified)
    }

    /// The previous publish's entries by usage id, the first where one is listed twice. An index,
    /// not a dictionary of entries: 100,000 entries copied into a table cost half a second.
    struct EntriesByUsageID: Sendable {
        private let blocks: [BlockEntry]
        private let positions: [String: Int]

        init(_ blocks: [BlockEntry]) {
            self.blocks = blocks
            var positions: [String: Int] = [:]
            positions.reserveCapacity(blocks.count)
            for (position, block) in blocks.enumerated() where positions[block.usageID] == nil {
                positions[block.usageID] = position
            }
            self.positions = positions
        }

        subscript(usageID: String) -> BlockEntry? {
            positions[usageID].map { blocks[$0] }
        }
    }

    /// A type folder (or a folder of published contents, `files/<hh>`) that is a link would put
    /// archives (and their deletion) outside DIR.
    private func refuseLinkedFolders(in out: String) throws(BuildError) {
        let shards = (DirectoryEntry.entries(of: out + "/" + CourseFile.folder) ?? []).map { (CourseFile.folder + "/" + $0.name, $0.kind) }
        let names = (DirectoryEntry.entries(of: out) ?? []).map { ($0.name, $0.kind) } + shards
        if let link = names.filter({ $0.1 == .link }).map(\.0).min() {
            throw .output(path: out + "/" + link, reason: "is a symbolic link; everything a build writes stays inside the output folder, so it must be a real folder or file")
        }
    }

    /// Renders and archives every leaf on `--jobs` workers, after `PagePlan` has decided what
    /// each page needs to know of the others.
    private func packageBlocks(
        _ leaves: [Block], of course: Course, export: ExportDirectory, renderer: BlockRenderer, assets: AssetStore,
        runtime: PageRuntime?, previous: PreviousPublish, settings: [String], memos: BlockMemos<BlockNote>,
        progress: @Sendable (Int, Int) -> Void, phase: inout PhaseClock, into report: inout BuildReport
    ) -> ([BlockPackager.Packaged], PagePlan, HTMLFileFacts?) {
        let rememberedFiles = HTMLFileFacts.load(from: options.stateFolder)
        var inputs = BlockInputs(
            settings: settings, course: course, leaves: leaves, export: export, renderer: renderer, assets: assets,
            remembered: rememberedFiles, workers: options.jobs)
        let pages = PagePlan(
            course: course, export: export, renderer: renderer, own: inputs.own, styleOnly: inputs.styleOnly,
            remembered: PageFacts.load(from: options.stateFolder), workers: options.jobs)
        inputs.plan(pages)
        for (unit, bytes) in pages.unsharedHeads {
            report.warnings.append(Diagnostic(
                block: unit, file: nil,
                message: "the style-only html blocks of this unit (only <style>, <link> and <script>) hold \(bytes) bytes, more than the \(PagePlan.unitHeadLimit >> 10) KiB copied into each of its other pages: those pages are published without them"))
        }
        report.durations.planSeconds = phase.lap()
        let packager = BlockPackager(
            course: course, export: export, renderer: renderer, assets: assets,
            options: options, previous: previous, pages: pages, runtime: runtime, inputs: inputs, memos: memos)
        for folder in Set(leaves.map { ArchiveNaming.component($0.type) }).sorted() {
            try? FileManager.default.createDirectory(atPath: options.outputFolder + "/" + folder, withIntermediateDirectories: true)
        }
        let packaged = leaves.parallelMap(workers: options.jobs, progress: progress) { packager.package($0) }
        return (packaged, pages, inputs.htmlFiles.facts == rememberedFiles.facts ? nil : inputs.htmlFiles)
    }

    /// What the next build needs to skip the blocks whose inputs will not have changed.
    static func memos(of packaged: [BlockPackager.Packaged]) -> BlockMemos<BlockNote> {
        var memos = BlockMemos<BlockNote>()
        memos.memos.reserveCapacity(packaged.count)
        for block in packaged {
            guard let inputs = block.inputs else { continue }
            switch block.outcome {
            case .built(let entry, _, let warnings), .reused(let entry, let warnings):
                guard let contentHash = entry.contentHash else { continue }
                memos.memos[entry.usageID] = .init(inputs: inputs, contentHash: contentHash, note: BlockNote(warnings: warnings, links: block.links))
            case .onlineOnly(let entry):
                memos.memos[entry.usageID] = .init(inputs: inputs, contentHash: BlockPackager.onlineOnlyMemo(reason: entry.reason), note: BlockNote(warnings: [], links: block.links))
            case .failed(let failure, fromInputs: true):
                guard let usageID = failure.block else { continue }
                memos.memos[usageID] = .init(inputs: inputs, contentHash: BlockPackager.failedMemo, note: BlockNote(warnings: [failure], links: block.links))
            case .failed(_, fromInputs: false):
                continue
            }
        }
        return memos
    }

    /// The blocks' outcomes gathered into manifest entries and the report.
    struct CollectedOutcomes {
        var entries: [BlockEntry] = []
        /// Entries whose new archive waits beside the published one, to be swapped in.
        var staged: [(entry: Int, path: String)] = []
        /// A block that failed for want of disk space or the like is tried again next time.
        var failedWhileWriting = false
        /// Folders that received a new name: synced before any manifest names what is in them.
        var writtenFolders = Set<String>()
    }

    private func collect(
        _ outcomes: some Sequence<BlockOutcome>, of leaves: [Block], course: Course, previous: PreviousPublish, into report: inout BuildReport
    ) -> CollectedOutcomes {
        let out = options.outputFolder
        var collected = CollectedOutcomes()
        collected.entries.reserveCapacity(leaves.count)
        for (block, outcome) in zip(leaves, outcomes) {
            switch outcome {
            case .built(let entry, let stagedAt, let warnings):
                report.counts.built += 1
                report.warnings += warnings
                if let stagedAt { collected.staged.append((collected.entries.count, stagedAt)) }
                if let written = stagedAt ?? entry.archive { collected.writtenFolders.insert(DurableFile.folder(of: out + "/" + written)) }
                collected.entries.append(entry)
            case .reused(let entry, let warnings):
                report.counts.reused += 1
                report.warnings += warnings
                collected.entries.append(entry)
            case .onlineOnly(let entry):
                report.counts.offlineFalse += 1
                collected.entries.append(entry)
            case .failed(let diagnostic, let fromInputs):
                report.counts.failed += 1
                if !fromInputs { collected.failedWhileWriting = true }
                report.errors.append(diagnostic)
                // The block's last good publish stays available.
                if let before = previous.entries[block.usageID] { collected.entries.append(before) }
            }
        }
        for issue in course.issues {
            report.counts.failed += 1
            report.errors.append(Diagnostic(block: issue.usageID, file: issue.file, message: issue.message, id: Self.diagnosticID(of: issue)))
        }
        report.warnings += course.warnings.map { Diagnostic(block: $0.usageID, file: $0.file, message: $0.message, id: Self.diagnosticID(of: $0)) }
        // When part of the tree could not be read, a block missing from this build may still
        // exist: keep everything the previous publish had rather than delete it.
        let present = Set(collected.entries.map(\.usageID))
        if !course.issues.isEmpty {
            collected.entries += (previous.manifest?.blocks ?? []).filter { !present.contains($0.usageID) }
        }
        report.counts.blocks = collected.entries.count
        return collected
    }

    /// The manifest's top-level `files`: every content a listing names, as this build published
    /// it or, for an entry kept from the previous publish (a block that failed this time), as
    /// that publish listed it. A kept entry whose listing names a content neither knows loses
    /// its listing (a client then downloads its archive), so every listed hash is a key.
    static func listedContents(
        of manifest: inout CourseManifest, published: [String: CourseFile], previous: CourseManifest?
    ) -> [String: CourseFile]? {
        var files: [String: CourseFile] = [:]
        func known(_ listing: FileListing?) -> Bool {
            guard let listing else { return true }
            for sha256 in listing.values where files[sha256] == nil {
                guard let file = published[sha256] ?? previous?.files?[sha256] else { return false }
                files[sha256] = file
            }
            return true
        }
        for index in manifest.blocks.indices where !known(manifest.blocks[index].files) {
            manifest.blocks[index].files = nil
            manifest.blocks[index].unpackedSize = nil
        }
        for kind in SharedArchive.Kind.allCases where !known(manifest[shared: kind]?.files) {
            manifest[shared: kind]?.files = nil
            manifest[shared: kind]?.unpackedSize = nil
        }
        return files.isEmpty ? nil : files
    }

    /// A shared archive (runtime, search index) in the manifest, written unless the previous
    /// publish holds it already.
    private func publishShared(
        _ content: SharedContent, in manifest: inout CourseManifest, previous: CourseManifest?, writer: ZipWriter,
        store: CourseFileStore, written writtenFolders: inout Set<String>
    ) throws(BuildError) {
        let out = options.outputFolder
        do {
            let (published, written) = try content.publish(into: out, writer: writer, store: store, previous: previous?[shared: content.kind])
            manifest[shared: content.kind] = published
            if written { writtenFolders.insert(out + "/" + content.kind.folder) }
        } catch {
            throw .output(path: out + "/" + content.archivePath, reason: "cannot write the \(content.kind.title): \(error)")
        }
    }

    /// The search index of the blocks `entries` lists, with what the previous build of this
    /// output left in the state folder.
    private func searchIndex(
        of course: Course, export: ExportDirectory, renderer: BlockRenderer, entries: [BlockEntry]
    ) throws(BuildError) -> SearchIndexStep {
        let state = options.stateFolder
        do {
            return try SearchIndexStep(
                course: course, export: export, renderer: renderer, entries: entries,
                cachedChunks: DeflatedChunks.load(from: state, level: options.compressionLevel),
                cachedParts: SearchParts.load(from: state, scope: SearchParts.scope(language: course.language, level: options.compressionLevel)),
                workers: options.jobs)
        } catch {
            throw .output(path: options.outputFolder + "/search", reason: "cannot compress the search index: \(error)")
        }
    }

    /// Every archive's data and name reach the disk before a manifest naming it replaces the old
    /// one. Archives are written without a sync each (`PendingSyncs`) and made durable together
    /// here: on a disk whose flush costs about a millisecond, a build of 3,000 pages otherwise
    /// spends seconds waiting in fsync. The manifest's new parts go with them; then their folders
    /// are synced, unless the whole file system was. `manifest.json` and the index are each
    /// synced before their rename, the index last: after a power cut, whichever is on disk names
    /// only parts and archives whose bytes are on disk too. Staged archives are named by an
    /// interim manifest, then swapped in. Returns the index written (the parts' bytes are let go:
    /// at 100,000 blocks they are a quarter of a gigabyte).
    private func writeManifest(
        _ manifest: CourseManifest, previous: PreviousPublish, staged: [(entry: Int, path: String)], writtenFolders: Set<String>,
        pending: PendingSyncs?, report: inout BuildReport
    ) throws(BuildError) -> ManifestIndex {
        let out = options.outputFolder
        let final = try ManifestWrite(
            manifest, in: out, pending: pending, workers: options.jobs, published: previous.published.flatMap { ManifestSplit.PublishedParts($0, in: out, workers: options.jobs) })
        guard final.refusals.isEmpty else { throw .refusedByClients(final.refusals) }
        report.warnings += final.warnings
        var interim: ManifestWrite?
        if !staged.isEmpty {
            var pointing = manifest
            for (index, path) in staged { pointing.blocks[index] = Staging.pointing(pointing.blocks[index], at: path) }
            interim = try ManifestWrite(
                pointing, in: out, pending: pending, workers: options.jobs, reusing: (final, Set(staged.map(\.entry))))
        }
        var folders = writtenFolders
        if interim?.wroteParts ?? final.wroteParts { folders.insert(out + "/" + ManifestPart.folder) }
        try makeDurable(pending: pending, folders: folders)
        do {
            if let interim {
                try interim.writeTop(in: out, whole: true, index: true)
                for (index, path) in staged {
                    try Staging.promote(out + "/" + path, to: out + "/" + (manifest.blocks[index].archive ?? path))
                }
                try Self.syncFolders(writtenFolders)
            }
            // After staging, the files on disk name the staged copies, even when the final
            // manifest equals the previous publish (an archive written again with the same content).
            let restage = interim != nil
            let whole = restage || manifest != previous.manifest || previous.published?.hasWholeFile != true
            let index = restage || previous.published?.indexBytes != final.indexBytes
            try final.writeTop(in: out, whole: whole, index: index)
        } catch let error as ManifestError {
            throw .publish(error)
        } catch let error as BuildError {
            throw error
        } catch {
            throw .output(path: out + "/" + ManifestIndex.fileName, reason: "\(error)")
        }
        for (_, path) in staged { unlink(out + "/" + path) }
        return final.index
    }

    /// Archives and parts written so far reach the disk, and the folders that hold their names.
    private func makeDurable(pending: PendingSyncs?, folders: Set<String>) throws(BuildError) {
        let out = options.outputFolder
        var namesAreDurable = false
        do {
            namesAreDurable = try pending?.flush(within: out) ?? false
        } catch {
            throw .output(path: error.path, reason: "cannot sync the new archive to disk: \(String(cString: strerror(error.errno)))")
        }
        if !namesAreDurable {
            // DIR itself too: it may hold type folders made by this build.
            try Self.syncFolders(folders.isEmpty ? [] : folders.union([out]))
        }
    }

    /// Archives of removed blocks (and a replaced runtime) go only after the manifest that no
    /// longer names them is in place. Returns how many were removed.
    private func removeUnnamedArchives(previous: Set<String>, manifest: CourseManifest) -> Int {
        let out = options.outputFolder
        let kept = Set(
            manifest.blocks.compactMap(\.archive) + manifest.blocks.compactMap(\.runtime) + manifest.sharedArchives.map(\.archive))
        var removed = 0
        var emptied = Set<String>()
        for stale in previous.subtracting(kept).sorted() {
            // unlink, not a recursive remove: an archive is a file, never a folder.
            guard Staging.isPublishable(stale) else { continue }
            if unlink(out + "/" + stale) == 0 {
                // A replaced search index is no removed block.
                if !stale.hasPrefix("search/") { removed += 1 }
                emptied.insert(DurableFile.folder(of: out + "/" + stale))
            }
        }
        // A removal lost in a power cut would leave an archive no manifest names, forever.
        try? Self.syncFolders(emptied)
        Self.removeEmptyFolders(in: out)
        return removed
    }

    /// The state folder, made if needed; never inside the output folder, which a web server or
    /// a bucket copy would publish whole. Files an older coursepack kept in the output folder
    /// itself are removed: the published folder ends up holding only what the manifest names.
    private func prepareStateFolder() throws(BuildError) {
        let out = options.outputFolder
        let state = options.stateFolder
        let existed = access(state, F_OK) == 0
        do {
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        } catch {
            throw .output(path: state, reason: "cannot create the state folder (choose another with --state-dir)")
        }
        if let outReal = Self.realPath(out), let stateReal = Self.realPath(state),
            stateReal == outReal || stateReal.hasPrefix(outReal.hasSuffix("/") ? outReal : outReal + "/")
        {
            if !existed { rmdir(state) }
            throw .invalidOption("--state-dir \(state) is inside --out \(out): everything there is published; choose a folder outside it")
        }
        for legacy in IncrementalBuild.legacyFileNames + [".coursepack.lock"] {
            unlink(out + "/" + legacy)
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    static func syncFolders(_ folders: Set<String>) throws(BuildError) {
        for folder in folders.sorted() {
            do {
                try DurableFile.syncFolder(folder)
            } catch {
                throw .output(path: folder, reason: "cannot sync it to disk: \(String(cString: strerror(error.errno)))")
            }
        }
    }

    /// Type folders made for blocks that turned out to have no archive (online-only ones), or
    /// emptied by removals: the published folder holds no empty folders. `rmdir` leaves any
    /// folder that holds something.
    static func removeEmptyFolders(in out: String) {
        for entry in DirectoryEntry.entries(of: out) ?? [] where entry.kind == .folder {
            rmdir(out + "/" + entry.name)
        }
    }

    /// Web servers derive `ETag`/`Last-Modified` from size and mtime in whole seconds; a new
    /// manifest of the same size written within the same second would look unchanged to
    /// clients, so its mtime is moved past the old one's second.
    static func advanceModificationTime(of path: String, past previous: Int64?) {
        guard let previous, let now = FileStamp.of(path)?.modified,
            now / 1_000_000_000 <= previous / 1_000_000_000
        else { return }
        let next = timespec(tv_sec: Int(previous / 1_000_000_000 + 1), tv_nsec: 0)
        var times = [next, next]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Files a killed build left behind: half-written archives (`.<name>.tmp-<pid>-<n>`) and
    /// staged archives that no manifest names.
    /// The output holds `<type>/<name>.zip` and a few files at its top: two levels to look at.
    private func removeTemporaryLeftovers(in folder: String, keeping named: Set<String>) {
        func isLeftover(_ path: String, _ name: String) -> Bool {
            name.containsUTF8(".tmp-") || (Staging.isStaged(name) && !named.contains(path))
        }
        for top in DirectoryEntry.entries(of: folder) ?? [] {
            if isLeftover(top.name, top.name) { unlink(folder + "/" + top.name); continue }
            guard top.kind == .folder else { continue }
            for entry in DirectoryEntry.entries(of: folder + "/" + top.name) ?? [] {
                if isLeftover(top.name + "/" + entry.name, entry.name) { unlink(folder + "/" + top.name + "/" + entry.name); continue }
                // Published contents sit one level deeper: `files/<hh>/<sha256>`.
                guard top.name == CourseFile.folder, entry.kind == .folder else { continue }
                let shard = folder + "/" + top.name + "/" + entry.name
                for inner in DirectoryEntry.entries(of: shard) ?? [] where inner.name.containsUTF8(".tmp-") {
                    unlink(shard + "/" + inner.name)
                }
            }
        }
    }
}
