import BlockRenderer
import CourseExport
import Dispatch
import Foundation
import Manifest
import ParallelMap
import Synchronization
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
        // The course is stamped as of now, before anything is read: a file changed after this
        // moment makes the stamp unsettled, whenever the walk itself runs. With a previous state
        // the stamp decides whether there is anything to do; without one it is only needed at
        // the end, and is walked while the manifest is written, when a core is free.
        let since = TreeStamp.now()
        let stampCourse: @Sendable () -> (key: String, settled: Bool)? = { [options] in
            BuildState.inputs(
                coursePath: coursePath, options: options,
                rendererFingerprint: renderer.fingerprint + "/" + SearchIndexStep.fingerprint + "/" + PageRuntime.stamp(of: options.runtimeSource),
                since: since)
        }
        var stampedInputs: Background<(key: String, settled: Bool)?>?
        if BuildState.exists(in: options.stateFolder) {
            let (unchanged, inputs) = unchangedBuild(started: started, stampCourse: stampCourse)
            if let unchanged { return unchanged }
            stampedInputs = Background(finished: inputs)
        }

        let course: Course
        let export: OpenedExport
        do {
            (course, export) = try CourseLoader.open(coursePath, workers: options.jobs)
        } catch {
            throw .course(error)
        }
        defer { export.close() }
        let loaded = Date()

        let out = options.outputFolder
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            throw .output(path: out, reason: "cannot create the output folder")
        }
        guard access(out, W_OK) == 0 else { throw .output(path: out, reason: "the output folder is not writable") }
        let lock = try OutputLock(folder: out, timeout: options.lockTimeout)
        defer { withExtendedLifetime(lock) {} }
        // Every check that can refuse the build comes before anything in DIR or the state changes.
        let manifestPath = out + "/manifest.json"
        let previous: CourseManifest?
        do {
            previous = try ManifestFile.read(manifestPath)
        } catch {
            throw .previousManifest(error)
        }
        if let previous, previous.courseID != course.id {
            throw .output(path: manifestPath, reason: "belongs to \(previous.courseID), not \(course.id); use another --out")
        }
        let previousArchives = Set((previous?.blocks ?? []).compactMap(\.archive) + [previous?.runtime?.archive, previous?.search?.archive].compactMap { $0 })
        // The build deletes what the previous manifest names: it is checked as strictly as a
        // server's manifest before anything it names is touched.
        if let unsafe = previousArchives.sorted().first(where: { !ArchivePaths.isSafe($0) }) {
            throw .output(path: manifestPath, reason: "names \"\(unsafe)\" as an archive, which is not of the form <type>/<name>.zip; refusing to touch what it names")
        }
        // A type folder that is a link would put archives (and their deletion) outside DIR.
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).sorted() {
            var info = stat()
            if lstat(out + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
                throw .output(path: out + "/" + name, reason: "is a symbolic link; everything a build writes stays inside the output folder, so it must be a real folder or file")
            }
        }
        let state = try prepareStateFolder()
        // From here the output may change; the state describes it again only once it is final.
        BuildState.remove(from: state)
        removeTemporaryLeftovers(in: out, keeping: previousArchives)

        var report = BuildReport(courseID: course.id, publishedAt: options.publishedAt, outputFolder: out)
        let leaves = course.blocks.filter { !$0.isContainer }
        let previousEntries = Dictionary((previous?.blocks ?? []).map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        let previousHashes = HashCache.load(from: state)
        let assets = AssetStore(
            export: export.directory, course: course, writer: ZipWriter(level: options.compressionLevel),
            previousHashes: previousHashes)
        let pages = PagePlan(course: course, export: export.directory, renderer: renderer, workers: options.jobs)
        let (runtime, runtimeMissing) = PageRuntime.load(from: options.runtimeSource)
        if !runtimeMissing.isEmpty {
            report.warnings.append(Diagnostic(
                block: course.id, file: runtimeMissing[0],
                message: "the page runtime (jQuery, math) is not installed (\(PageRuntime.requiredPackages)): pages that need it list it in requires_network"))
        }
        let packager = BlockPackager(
            course: course, export: export.directory,
            renderer: renderer,
            assets: assets,
            options: options, previous: previousEntries, jumpTargets: pages.jumpTargets, onlineTargets: pages.onlineTargets,
            unitHeads: pages.unitHeads, runtime: runtime,
            publishedArchives: previousArchives, previousManifestWritten: FileStamp.of(manifestPath)?.modified)

        for folder in Set(leaves.map { ArchiveNaming.component($0.type) }).sorted() {
            try? FileManager.default.createDirectory(atPath: out + "/" + folder, withIntermediateDirectories: true)
        }
        let outcomes = leaves.parallelMap(workers: options.jobs, progress: progress) { packager.package($0) }

        // One job means one thread, however many cores there are.
        let pendingInputs = stampedInputs ?? (options.jobs > 1 ? Background(stampCourse) : Background(finished: stampCourse()))
        var entries: [BlockEntry] = []
        var staged: [(entry: Int, path: String)] = []
        // A block that failed for want of disk space or the like is tried again next time.
        var failedWhileWriting = false
        // Folders that received a new name: synced before any manifest names what is in them.
        var writtenFolders = Set<String>()
        for (block, outcome) in zip(leaves, outcomes) {
            switch outcome {
            case .built(let entry, let stagedAt, let warnings):
                report.counts.built += 1
                report.warnings += warnings
                if let stagedAt { staged.append((entries.count, stagedAt)) }
                if let written = stagedAt ?? entry.archive { writtenFolders.insert(DurableFile.folder(of: out + "/" + written)) }
                entries.append(entry)
            case .reused(let entry, let warnings):
                report.counts.reused += 1
                report.warnings += warnings
                entries.append(entry)
            case .onlineOnly(let entry):
                report.counts.offlineFalse += 1
                entries.append(entry)
            case .failed(let diagnostic, let fromInputs):
                report.counts.failed += 1
                if !fromInputs { failedWhileWriting = true }
                report.errors.append(diagnostic)
                // The block's last good publish stays available.
                if let before = previousEntries[block.usageID] { entries.append(before) }
            }
        }
        for issue in course.issues {
            report.counts.failed += 1
            report.errors.append(Diagnostic(block: issue.usageID, file: issue.file, message: issue.message))
        }
        report.warnings += course.warnings.map { Diagnostic(block: $0.usageID, file: $0.file, message: $0.message) }
        // When part of the tree could not be read, a block missing from this build may still
        // exist: keep everything the previous publish had rather than delete it.
        let present = Set(entries.map(\.usageID))
        if !course.issues.isEmpty {
            entries += (previous?.blocks ?? []).filter { !present.contains($0.usageID) }
        }
        report.counts.blocks = entries.count

        var manifest = CourseManifest(courseID: course.id, publishedAt: options.publishedAt, generator: options.generator, blocks: entries)
        manifest.outline = course.blocks.filter(\.isContainer).map {
            OutlineEntry(usageID: $0.usageID, type: $0.type, displayName: $0.displayName, children: $0.children)
        }
        if let runtime, let name = entries.lazy.compactMap(\.runtime).first, name == runtime.archivePath {
            do {
                let (published, written) = try runtime.publish(into: out, writer: assets.writer, previous: previous?.runtime)
                manifest.runtime = published
                if written { writtenFolders.insert(out + "/runtime") }
            } catch {
                throw .output(path: out + "/" + runtime.archivePath, reason: "cannot write the runtime archive: \(error)")
            }
        }
        let searchStarted = Date()
        let search = SearchIndexStep(
            course: course, export: export.directory, renderer: renderer, entries: entries,
            previous: SearchIndexStep.published(in: out, manifest: previous), workers: options.jobs)
        do {
            let (published, written) = try search.publish(into: out, writer: assets.writer, previous: previous?.search)
            manifest.search = published
            if written { writtenFolders.insert(out + "/search") }
        } catch {
            throw .output(path: out + "/" + search.archivePath, reason: "cannot write the search index: \(error)")
        }
        report.durations.searchSeconds = Date().timeIntervalSince(searchStarted)
        if let previous, previous.blocks == manifest.blocks, previous.outline == manifest.outline, previous.search == manifest.search {
            // Nothing changed: keep the previous publish time, so the file stays byte-identical.
            manifest.publishedAt = previous.publishedAt
        }
        // Every archive's data was synced before it got its name (ZipWriter); its folder is
        // synced here, before a manifest naming it replaces the old one, and the manifest is
        // synced before its rename: after a power cut, the manifest on disk names only
        // archives whose bytes are on disk too.
        // DIR itself too: it may hold type folders made by this build.
        try Self.syncFolders(writtenFolders.isEmpty ? [] : writtenFolders.union([out]))
        do {
            if !staged.isEmpty {
                var interim = manifest
                for (index, path) in staged { interim.blocks[index] = Staging.pointing(interim.blocks[index], at: path) }
                try ManifestFile.write(interim, to: manifestPath)
                for (index, path) in staged {
                    try Staging.promote(out + "/" + path, to: out + "/" + (manifest.blocks[index].archive ?? path))
                }
                try Self.syncFolders(writtenFolders)
            }
            // After staging, the manifest on disk names the staged copies, even when the final one
            // equals the previous publish (an archive written again with the same content).
            if manifest != previous || !staged.isEmpty {
                let previousStamp = FileStamp.of(manifestPath)
                try ManifestFile.write(manifest, to: manifestPath)
                Self.advanceModificationTime(of: manifestPath, past: previousStamp?.modified)
            }
        } catch let error as ManifestError {
            throw .publish(error)
        } catch let error as BuildError {
            throw error
        } catch {
            throw .output(path: manifestPath, reason: "\(error)")
        }
        for (_, path) in staged { unlink(out + "/" + path) }
        let hashes = assets.hashCache
        if hashes.records != previousHashes.records { hashes.save(to: state) }

        let kept = Set(entries.compactMap(\.archive) + entries.compactMap(\.runtime) + [manifest.runtime?.archive, manifest.search?.archive].compactMap { $0 })
        var emptied = Set<String>()
        for stale in previousArchives.subtracting(kept).sorted() {
            // unlink, not a recursive remove: an archive is a file, never a folder.
            guard ArchivePaths.isSafe(stale) else { continue }
            if unlink(out + "/" + stale) == 0 {
                report.counts.removed += 1
                emptied.insert(DurableFile.folder(of: out + "/" + stale))
            }
        }
        // A removal lost in a power cut would leave an archive no manifest names, forever.
        try? Self.syncFolders(emptied)
        Self.removeEmptyFolders(in: out)

        if let inputs = pendingInputs.value, inputs.settled, !failedWhileWriting,
            let outputs = BuildState.outputs(in: out, workers: options.jobs)
        {
            BuildState(
                inputs: inputs.key, outputs: outputs, courseID: course.id, blocks: report.counts.blocks,
                offlineFalse: report.counts.offlineFalse, warnings: report.warnings,
                failed: report.counts.failed, errors: report.errors
            ).save(to: state)
        }

        let finished = Date()
        report.durations.loadSeconds = loaded.timeIntervalSince(started)
        report.durations.packageSeconds = finished.timeIntervalSince(loaded)
        report.durations.totalSeconds = finished.timeIntervalSince(started)
        return report
    }

    /// The report of a build whose course, options, program and output are all exactly as the
    /// last clean build left them (nil when anything differs or cannot be checked), and the
    /// course's stamp, which a full build needs too. The output is walked on another thread
    /// while the course is stamped on this one.
    private func unchangedBuild(
        started: Date, stampCourse: () -> (key: String, settled: Bool)?
    ) -> (BuildReport?, (key: String, settled: Bool)?) {
        let out = options.outputFolder
        guard let lock = try? OutputLock(folder: out, timeout: options.lockTimeout) else { return (nil, stampCourse()) }
        return withExtendedLifetime(lock) {
            let outputs = Background { BuildState.outputs(in: out) }
            let inputs = stampCourse()
            let outputsNow = outputs.value
            guard let state = BuildState.load(from: options.stateFolder), let inputs, state.inputs == inputs.key, outputsNow == state.outputs else {
                return (nil, inputs)
            }
            var report = BuildReport(courseID: state.courseID, publishedAt: options.publishedAt, outputFolder: out)
            report.counts.blocks = state.blocks
            report.counts.reused = state.blocks - state.offlineFalse
            report.counts.offlineFalse = state.offlineFalse
            report.warnings = state.warnings
            report.counts.failed = state.failed
            report.errors = state.errors
            report.inputsUnchanged = true
            report.durations.totalSeconds = Date().timeIntervalSince(started)
            return (report, inputs)
        }
    }

    /// The state folder, made if needed; never inside the output folder, which a web server or
    /// a bucket copy would publish whole. Files an older coursepack kept in the output folder
    /// itself are removed: the published folder ends up holding only what the manifest names.
    private func prepareStateFolder() throws(BuildError) -> String {
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
        for legacy in [HashCache.legacyFileName, BuildState.legacyFileName, ".coursepack.lock"] {
            unlink(out + "/" + legacy)
        }
        return state
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
        for name in (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? [] {
            var info = stat()
            guard lstat(out + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { continue }
            rmdir(out + "/" + name)
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
        let manager = FileManager.default
        func isLeftover(_ path: String, _ name: String) -> Bool {
            name.contains(".tmp-") || (Staging.isStaged(name) && !named.contains(path))
        }
        for top in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] {
            if isLeftover(top, top) { unlink(folder + "/" + top); continue }
            var info = stat()
            guard lstat(folder + "/" + top, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { continue }
            for name in (try? manager.contentsOfDirectory(atPath: folder + "/" + top)) ?? [] where isLeftover(top + "/" + name, name) {
                unlink(folder + "/" + top + "/" + name)
            }
        }
    }
}

/// A value computed on another thread while the caller goes on; `value` waits for it.
final class Background<T: Sendable>: Sendable {
    private let result: Mutex<T?>
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () -> T) {
        result = Mutex(nil)
        DispatchQueue.global().async { [self] in
            result.withLock { $0 = work() }
            done.signal()
        }
    }

    init(finished value: T) {
        result = Mutex(value)
        done.signal()
    }

    var value: T {
        done.wait()
        defer { done.signal() }
        // Set before the semaphore is signalled.
        return result.withLock { $0 }!
    }
}

enum ArchivePaths {
    /// An archive path a manifest may name: `<type>/<name>.zip` (or, in a manifest a killed build
    /// left mid-staging, its staged copy `<type>/.<name>.zip.staged-<hash>`): two plain components,
    /// so it can never be the manifest, a type folder, a dot file or anything outside the folder.
    static func isSafe(_ path: String) -> Bool {
        guard (try? EntryName.validate(path)) != nil else { return false }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, isPlain(parts[0]) else { return false }
        var name = parts[1]
        if name.hasPrefix("."), let marker = name.range(of: Staging.marker) {
            name = name[name.index(after: name.startIndex)..<marker.lowerBound]
        }
        return name.count > 4 && name.hasSuffix(".zip") && isPlain(name)
    }

    private static func isPlain(_ part: Substring) -> Bool {
        !part.isEmpty && !part.hasPrefix(".") && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-~.".contains($0)) }
    }
}
