import FileSystem
import Foundation
import Manifest
import SyncClient
import ZipArchive

extension ClientTarget {
    public struct SyncRequest: Sendable {
        public var source: SyncSource
        /// Blocks, or containers whose blocks, to install (`--blocks`); empty: the whole course,
        /// as far as the budget allows, unless `next` is given.
        public var selection: [String] = []
        /// Added to the course's pins (`--pin`).
        public var pin: [String] = []
        /// Removed from the course's pins (`--unpin`).
        public var unpin: [String] = []
        /// The target's new budget (`--budget`); nil keeps the one recorded.
        public var budget: UInt64?
        /// Seconds after which unpinned blocks not opened are removed (`--expire-after`),
        /// remembered like the budget; nil keeps the one recorded.
        public var expireAfter: Double?
        /// The clock: now, unless a test gives another time.
        public var now: @Sendable () -> Date = { Date() }
        /// Prefetch: the `next` blocks in course order after `after` (a block: the ones following
        /// it; a container: its first ones).
        public var next: Int?
        public var after: String?
        public var jobs = 4
        public var limits = ZipReader.Limits()
        public var timeouts = NetworkTimeouts()
        /// Bytes this sync may unpack over all its blocks (`--max-unpacked-bytes`).
        public var maximumUnpackedBytes = SyncClient.Options.defaultMaximumUnpackedBytes
        /// A source that served another course before and serves this one now replaces it
        /// (`--replace-course`); otherwise such a sync is refused before anything changes.
        public var replaceCourse = false

        public init(source: SyncSource) { self.source = source }
    }

    public struct SyncReport: Sendable {
        public var courseFolder = ""
        public var summary: SyncClient.Summary?
        /// A single-course target was moved into its course folder first.
        public var migrated = false
        /// What reconciliation found and did, one line each.
        public var repairs: [String] = []
        /// Blocks removed to stay within the budget (usage ids).
        public var evicted: [String] = []
        /// Unpinned blocks removed for not being opened within `--expire-after` (usage ids).
        public var expired: [String] = []
        /// Blocks asked for that did not fit in the budget.
        public var overBudget: [String] = []
        /// Courses removed because their source now serves this course (`replaceCourse`).
        public var replacedCourses: [String] = []
        /// What the target takes on disk after the sync (`du -sb`), measured only when it has a
        /// budget: without one nothing depends on it, and at 100,000 blocks the walk takes seconds.
        public var installedBytes: UInt64?
        public var budget: UInt64?
    }

    /// One sync of one course into the target, in steps: fetch the server's manifest, check the
    /// request against it, plan the target's state (`prepare`), take the lock and settle the
    /// state under it (`settle`), reconcile, make room within the budget (`makeRoom`), install
    /// (`install`, by `SyncClient`), record use, then enforce the budget on what is on disk and
    /// write the pages (`finish`). Bad requests (unknown pin or block, pinned content over the
    /// budget, a folder that is not a target) throw before anything changes.
    public func sync(_ request: SyncRequest, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws(ClientError) -> SyncReport {
        let started = Date()
        let targetKind = try kind()
        defer { try? FileManager.default.removeItem(atPath: unknownCourseScratch) }
        let probe = try await probeSettled(request, targetKind: targetKind, started: started)
        if case .settled(let report) = probe { return report }
        let known = targetKind == .multiCourse ? try readState() : State()
        let fetched: FetchedManifest
        switch probe {
        case .changed(let probed?, _): fetched = probed
        default: fetched = try await fetchManifest(for: request, known: known, targetKind: targetKind)
        }
        let course = CourseView(fetched.manifest)
        try check(request, against: course)
        var preparation = try prepare(request, course: course, known: known)
        var report = SyncReport()
        report.courseFolder = preparation.folder
        report.budget = preparation.state.budget

        try makeFolder(stateFolder)
        let lock = try ClientTarget.lock(stateFolder + "/lock", waiting: .none)
        defer { withExtendedLifetime(lock) {} }
        try settle(&preparation, request: request, targetKind: targetKind, known: known, report: &report)
        var state = preparation.state
        let courseFolder = report.courseFolder
        let now = request.now().timeIntervalSince1970
        // The course is recorded before its folder exists: a sync cut short leaves a folder the
        // next one knows, not a stray it would remove.
        try saveLastUse(state: state)
        try makeFolder(root + "/" + courseFolder)

        // Every course: strays removed, damaged blocks dropped (and fetched again below when
        // still wanted); not this course when the probe found it as the last sync left it.
        report.repairs = reconcile(state: &state, skipping: intactCourse(probe, folder: courseFolder))
        report.expired = try expire(state: &state, now: now)
        let requested = course.requested(selection: request.selection, next: request.next, after: request.after)
        let room = try makeRoom(for: course, in: courseFolder, requested: requested, request: request, state: state, report: &report)
        let summary = try await install(fetched, keeping: room.keep, into: courseFolder, request: request, state: state, progress: progress)
        report.summary = summary
        keepPublished(fetched.manifest, courseRoot: root + "/" + courseFolder)
        recordUse(of: summary, requested: requested, in: courseFolder, at: now, state: &state)
        try finish(
            state: &state, courseFolder: courseFolder, published: fetched.manifest, local: summary.localManifest, filled: room.filled,
            report: &report)
        try saveSettled(summary.settledRecord, courseFolder: courseFolder)
        // The report tells what was done; the course's manifest and record go with the sync.
        report.summary?.localManifest = nil
        report.summary?.settledRecord = nil
        // The whole sync, manifest read, plan and pages included, not only the downloads.
        report.summary?.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Where this process fetches the manifest of a course the target does not know yet: the
    /// split manifest's parts land there as they arrive, and a sync moves them into the
    /// course's folder once it installs it. Removed when the sync ends, so that a sync refused
    /// (another one runs, the course is not wanted) leaves the target as it was.
    var unknownCourseScratch: String { root + "/" + Self.stateFolderName + "/no-course-\(getpid())" }

    /// The server's manifest, fetched once, conditionally on the copy cached by the course's
    /// last sync from the same source: an unchanged course costs one 304.
    func fetchManifest(for request: SyncRequest, known: State, targetKind: Kind) async throws(ClientError) -> FetchedManifest {
        let cachedIn = known.courses.first { $0.value.source == request.source.description }.map { root + "/" + $0.key }
            ?? (targetKind == .singleCourse ? root : unknownCourseScratch)
        do {
            return try await SyncClient(options: .init(source: request.source, target: cachedIn, timeouts: request.timeouts)).fetchManifest()
        } catch {
            throw .sync(error)
        }
    }

    /// Every id the request names is one the course knows, and a prefetch has both its halves.
    func check(_ request: SyncRequest, against course: CourseView) throws(ClientError) {
        for id in request.pin + request.unpin + request.selection + (request.after.map { [$0] } ?? []) where !course.knows(id) {
            throw .unknownID(id: id, course: course.manifest.courseID)
        }
        if (request.next == nil) != (request.after == nil) { throw .invalidRequest("prefetch needs both the number of blocks and the block to start after") }
    }

    /// The target's state as the sync will leave it, planned before the lock: the courses whose
    /// source now serves this one, the course's folder and record (source, pins), the budget.
    struct Preparation {
        var state: State
        var folder: String
        var record: CourseRecord
        var replaced: [String]
    }

    /// Plans the state (see `Preparation`); pinned content over the budget is refused here,
    /// before the lock, a migration or a download.
    func prepare(_ request: SyncRequest, course: CourseView, known: State) throws(ClientError) -> Preparation {
        let courseID = course.manifest.courseID
        let replaced = try coursesReplaced(by: courseID, from: request.source, in: known, replacing: request.replaceCourse)
        var state = known
        for name in replaced { state.courses[name] = nil }
        let folder = state.courses.first { $0.value.courseID == courseID }?.key ?? freeFolderName(for: courseID, in: known)
        var record = state.courses[folder] ?? CourseRecord(courseID: courseID, source: request.source.description)
        record.source = request.source.description
        record.pins = Array(Set(record.pins).union(request.pin).subtracting(request.unpin)).sorted()
        state.courses[folder] = record
        if let budget = request.budget { state.budget = budget }
        if let expireAfter = request.expireAfter { state.expireAfter = expireAfter }
        if let budget = state.budget {
            let pinned = pinnedBytes(state: state, server: (folder, course), installed: installedViews(state: state))
            guard pinned <= budget else { throw .pinnedOverBudget(pinned: pinned, budget: budget) }
        }
        return Preparation(state: state, folder: folder, record: record, replaced: replaced)
    }

    /// Under the lock: the state read again (a sync that finished since the first read is not
    /// undone), a single-course target moved into its course folder, and the courses the
    /// source replaces removed, once the course list is final.
    func settle(
        _ preparation: inout Preparation, request: SyncRequest, targetKind: Kind, known: State, report: inout SyncReport
    ) throws(ClientError) {
        if targetKind == .multiCourse {
            var fresh = try readState()
            for name in preparation.replaced { fresh.courses[name] = nil }
            var current = fresh.courses[preparation.folder] ?? preparation.record
            current.source = preparation.record.source
            current.pins = preparation.record.pins
            fresh.courses[preparation.folder] = current
            if let budget = request.budget { fresh.budget = budget }
            if let expireAfter = request.expireAfter { fresh.expireAfter = expireAfter }
            preparation.state = fresh
        }
        if targetKind == .singleCourse { try migrate(&preparation, report: &report) }
        // The record first, so that a sync cut short leaves a stray folder the next one removes.
        if !preparation.replaced.isEmpty {
            try saveLastUse(state: preparation.state)
            for name in preparation.replaced { ZipReader.removeTree(root + "/" + name) }
            report.replacedCourses = preparation.replaced.compactMap { known.courses[$0]?.courseID }
        }
    }

    /// Moves the single course into its folder; when it is this course, it keeps its folder
    /// and takes the request's source and pins.
    func migrate(_ preparation: inout Preparation, report: inout SyncReport) throws(ClientError) {
        let courseID = preparation.record.courseID
        let migrated = try migrateSingleCourse(into: State())
        report.migrated = true
        for (name, old) in migrated.courses {
            guard old.courseID == courseID else {
                preparation.state.courses[name] = old
                continue
            }
            var merged = old
            merged.source = preparation.record.source
            merged.pins = preparation.record.pins
            preparation.state.courses[preparation.folder] = nil
            preparation.state.courses[name] = merged
            report.courseFolder = name
        }
        // Another course's id may clean to the same folder name as the migrated one's: this
        // course then gets a folder of its own instead of syncing into (and replacing) it.
        if let taken = migrated.courses[preparation.folder], taken.courseID != courseID {
            let fresh = freeFolderName(for: courseID, in: preparation.state)
            preparation.state.courses[fresh] = preparation.record
            report.courseFolder = fresh
        }
    }

    /// What this course should hold, in priority order (`roomPlan`), and the evictions that
    /// make room for it, done.
    func makeRoom(
        for course: CourseView, in courseFolder: String, requested: [String], request: SyncRequest, state: State, report: inout SyncReport
    ) throws(ClientError) -> RoomPlan {
        // Without a budget the plan needs only which blocks were archived and are installed
        // (none archived: nothing), and evicts nothing.
        let needsViews = state.budget != nil || !(state.courses[courseFolder]?.archived ?? []).isEmpty
        var installed = needsViews ? installedViews(state: state) : [:]
        let room = roomPlan(
            for: course, in: courseFolder, requested: requested, fill: request.selection.isEmpty && request.next == nil,
            state: state, installed: installed, overhead: state.budget == nil ? 0 : overhead(for: course, in: courseFolder),
            skipping: Set(state.courses[courseFolder]?.archived ?? []))
        report.overBudget = room.overBudget
        for (name, id) in room.evict { installed[name]?.remove(id, courseRoot: root + "/" + name) }
        for (name, view) in installed where room.evict.contains(where: { $0.folder == name }) {
            try view.save(to: root + "/" + name)
        }
        report.evicted = room.evict.map(\.id)
        return room
    }

    /// What the target will take besides folders and their contents once this sync is done:
    /// its state and outline pages as they are now, with this course's manifest copies (the
    /// local manifest, and the server's the outline reads) and outline pages as the server's
    /// manifest makes them instead of what they take now.
    func overhead(for course: CourseView, in courseFolder: String) -> UInt64 {
        let usage = diskUsage()
        let courseRoot = root + "/" + courseFolder
        let copies = [courseRoot + "/manifest.json", SyncClient.stateFolder(of: courseRoot) + "/server-manifest.json", OutlinePage.publishedPath(courseRoot: courseRoot)]
        // What this course's copies and pages take now is replaced by what the sync writes.
        var walk = UsageWalk()
        for path in copies + [courseRoot + "/index.html", courseRoot + "/" + Self.navigationFolderName] { walk.walk(path, as: .state) }
        let present = walk.usage.state
        // Inventories count with their folders (`FolderCost`), not here.
        var inventories = UsageWalk()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
            inventories.walk(SyncClient.stateFolder(of: root + "/" + name) + "/files", as: .state)
        }
        // The record of a settled sync goes with this sync, which writes none within a budget.
        var settled = UsageWalk()
        settled.walk(SettledSync.path(target: courseRoot), as: .state)
        let state = usage.state - min(usage.state, inventories.usage.state + settled.usage.state)
        let manifestBytes = UInt64(ManifestFile.encode(course.manifest).count)
        let pages = OutlinePage.estimatedBytes(for: course.manifest)
        // Two copies: the local manifest, and the server's (over HTTP the one kept for a
        // conditional request, which the outline's copy is a link to).
        let written = 2 * manifestBytes + pages
        let grown = written > present ? written - present : 0
        // A folder listing many entries grows past one block: a margin of 1% for what no
        // estimate sees (type folders, outboxes, the store's prefix folders).
        let base = state + usage.outlinePages + grown + storeFolderBytes(offering: course.manifest)
        return base + base / 100 + 4 * DiskUsage.folderBytes
    }

    /// The store's prefix folders (`store/<hh>/`, up to 256 of 4 KiB each): those it has, and
    /// those the contents this course offers would add. No folder's cost lists them, and a
    /// course of a few hundred contents fills most of them (1 MiB).
    func storeFolderBytes(offering manifest: CourseManifest) -> UInt64 {
        UInt64(contentStore.prefixFolders(adding: manifest.files?.keys ?? [:].keys)) * DiskUsage.folderBytes
    }

    /// Downloads, verifies and installs the blocks to keep (`SyncClient.sync`); when that
    /// fails, the state is saved first.
    func install(
        _ fetched: FetchedManifest, keeping keep: Set<String>, into courseFolder: String, request: SyncRequest, state: State,
        progress: @Sendable (Int, Int) -> Void
    ) async throws(ClientError) -> SyncClient.Summary {
        var options = SyncClient.Options(
            source: request.source, target: root + "/" + courseFolder, selection: keep, jobs: request.jobs, limits: request.limits,
            timeouts: request.timeouts)
        options.emptySelectionMeansAll = false
        options.maximumUnpackedBytes = request.maximumUnpackedBytes
        options.replaceCourse = request.replaceCourse
        options.contentStore = contentStore.folder
        // The store is shared by every course: `finish` collects over all their manifests.
        options.collectsStore = false
        // A sync within a budget is never taken for a no-op (`probeSettled`).
        options.recordsSettled = state.budget == nil
        // Written once the outline pages are durable (`saveSettled`).
        options.returnsSettledRecord = true
        do {
            return try await SyncClient(options: options).sync(fetched: fetched, progress: progress)
        } catch {
            try? saveLastUse(state: state)
            throw .sync(error)
        }
    }

    /// The blocks installed now and the installed blocks asked for were used now.
    func recordUse(of summary: SyncClient.Summary, requested: [String], in courseFolder: String, at now: Double, state: inout State) {
        let failed = Set(summary.failures.map(\.usageID))
        for block in summary.plan.downloads where !failed.contains(block.usageID) {
            state.courses[courseFolder]?.lastUse[block.usageID] = now
        }
        for id in requested where state.courses[courseFolder]?.lastUse[id] != nil { state.courses[courseFolder]?.lastUse[id] = now }
        // Installed again (asked for): no longer archived.
        if let archived = state.courses[courseFolder]?.archived {
            let back = Set(state.courses[courseFolder]?.lastUse.keys.map { $0 } ?? [])
            let left = archived.filter { !back.contains($0) }
            state.courses[courseFolder]?.archived = left.isEmpty ? nil : left
        }
    }

    /// Removes every unpinned block of every course not used (installed or opened) within
    /// the target's `expireAfter`, and records it as archived; returns their usage ids.
    func expire(state: inout State, now: Double) throws(ClientError) -> [String] {
        guard let expireAfter = state.expireAfter else { return [] }
        var expired: [String] = []
        for (name, var view) in installedViews(state: state).sorted(by: { $0.key < $1.key }) {
            guard var record = state.courses[name] else { continue }
            let old = view.installedIDs.filter { id in
                !view.isPinned(id, pins: record.pins) && record.lastUse[id].map { now - $0 > expireAfter } == true
            }
            guard !old.isEmpty else { continue }
            for id in old { view.remove(id, courseRoot: root + "/" + name) }
            try view.save(to: root + "/" + name)
            record.archived = Array(Set(record.archived ?? []).union(old)).sorted()
            for id in old { record.lastUse[id] = nil }
            state.courses[name] = record
            expired += old
        }
        if !expired.isEmpty { try saveLastUse(state: state) }
        return expired
    }

    /// Keeps the server's manifest for the outline page: over HTTP a link to the copy kept for
    /// the next conditional request (one copy on disk), otherwise a copy.
    func keepPublished(_ manifest: CourseManifest, courseRoot: String) {
        let published = OutlinePage.publishedPath(courseRoot: courseRoot)
        let cached = SyncClient.cachedManifestPath(target: courseRoot)
        if let data = WholeFile.readIfUsable(cached, atMost: WholeFile.manifestLimit), (try? ManifestFile.decode(Data(data), path: cached)) == manifest {
            let temporary = DurableFile.temporaryPath(beside: published)
            if link(cached, temporary) == 0, rename(temporary, published) == 0 { return }
            unlink(temporary)
        }
        _ = try? ManifestFile.write(manifest, to: published)
    }

    /// Sizes were estimated from archives before the download; the budget is enforced on what
    /// the blocks now take on disk. Then last use is kept for installed blocks only, every
    /// course's outline page and the target's index are written, and the state is saved.
    /// `published`: the server's manifest of `courseFolder`, as `keepPublished` just kept it;
    /// `local`: its local manifest as the sync just wrote it.
    func finish(
        state: inout State, courseFolder: String, published: CourseManifest, local: CourseManifest?, filled: [String],
        report: inout SyncReport
    ) throws(ClientError) {
        var installed = installedViews(state: state, known: local.map { (courseFolder, $0) })
        let pages = (courseFolder, published)
        try writePages(installed, state: &state, published: pages)
        // Checked on the disk once everything is written; pages and state only shrink with
        // the blocks evicted, so they are written again after.
        let (evictedAfter, installedBytes) = try enforceBudget(on: &installed, state: state, courseFolder: courseFolder, filled: filled)
        report.evicted += evictedAfter
        report.installedBytes = installedBytes
        if !evictedAfter.isEmpty {
            try writePages(installed, state: &state, published: pages)
            report.installedBytes = diskUsage().total
        }
    }

    /// The record of a sync that left the course whole (`SettledSync`), written only once the
    /// pages written after the sync are on the disk: a sync the record vouches for rewrites no
    /// page, so a record saved before them would keep, after a power cut, frames left empty
    /// until the course next changes. Frames are written unsynced (`OutlinePage.writeFrames`):
    /// one `syncfs` covers them, or each was synced where there is none.
    func saveSettled(_ record: SettledSync?, courseFolder: String) throws(ClientError) {
        guard let record else { return }
        let courseRoot = root + "/" + courseFolder
        if SyncDurability.platformDefault == .fileSystem {
            do {
                try DurableFile.syncFileSystem(containing: courseRoot)
            } catch {
                throw .local(path: courseRoot, reason: "cannot make the outline pages durable: \(error)")
            }
        }
        record.save(target: courseRoot)
    }

    /// Keeps last use for installed blocks only, writes every course's outline page and the
    /// target's index, saves the state and collects the store. `published`: one course's
    /// server manifest in memory (the others' are read from their folders).
    private func writePages(
        _ installed: [String: InstalledCourse], state: inout State, published: (folder: String, manifest: CourseManifest)
    ) throws(ClientError) {
        for (name, view) in installed {
            let present = Set(view.installedIDs)
            let kept = (state.courses[name]?.lastUse ?? [:]).filter { present.contains($0.key) }
            state.courses[name]?.lastUse = kept
        }
        for (name, view) in installed {
            try OutlinePage.write(view.manifest, published: name == published.folder ? published.manifest : nil, into: root + "/" + name)
            // Problems installed now get their state file; removed ones lose it.
            try AnswerStateFiles.write(courseRoot: root + "/" + name, local: view.manifest)
        }
        try OutlinePage.writeTargetIndex(courses: installed.map { ($0.key, $0.value.manifest) }, into: root)
        try saveLastUse(state: state)
        collectStore(installed)
    }

    /// The target's content store, shared by its courses.
    public var contentStore: ContentStore { ContentStore(folder: ContentStore.folder(ofTarget: root)) }

    /// Deletes the store contents no installed course lists any more: after their manifests
    /// are written, so no manifest names a folder whose contents went (the folders' links keep
    /// their bytes anyway).
    func collectStore(_ installed: [String: InstalledCourse]) {
        contentStore.collect(keeping: installed.values.reduce(into: Set<String>()) { $0.formUnion(ContentStore.listed(in: $1.manifest)) })
    }

    /// The plan counted exact sizes before the download; the budget is still enforced on what
    /// the target takes on disk (`du -sb`), should anything have grown past the plan: blocks
    /// taken only to fill it first (last in course order first), then the least recently used.
    /// Returns the blocks evicted and the bytes the target takes (nil without a budget).
    func enforceBudget(
        on installed: inout [String: InstalledCourse], state: State, courseFolder: String, filled: [String]
    ) throws(ClientError) -> (evicted: [String], installedBytes: UInt64?) {
        collectStore(installed)
        guard state.budget != nil else { return ([], nil) }
        var total = diskUsage().total
        guard let budget = state.budget, total > budget else { return ([], total) }
        var candidates: [(folder: String, id: String, used: Double)] = []
        for (name, view) in installed {
            let pins = state.courses[name]?.pins ?? []
            for id in view.installedIDs where !view.isPinned(id, pins: pins) {
                candidates.append((name, id, state.courses[name]?.lastUse[id] ?? 0))
            }
        }
        // Blocks taken only to fill the budget go first (last in course order first), then the
        // least recently used.
        let fillRank = Dictionary(filled.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        candidates.sort { a, b in
            let rankA = a.folder == courseFolder ? fillRank[a.id] : nil
            let rankB = b.folder == courseFolder ? fillRank[b.id] : nil
            switch (rankA, rankB) {
            case let (x?, y?): return x > y
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a.used != b.used ? a.used < b.used : (a.folder, a.id) > (b.folder, b.id)
            }
        }
        var evicted: [String] = []
        for candidate in candidates where total > budget {
            installed[candidate.folder]?.remove(candidate.id, courseRoot: root + "/" + candidate.folder)
            evicted.append(candidate.id)
            try installed[candidate.folder]?.save(to: root + "/" + candidate.folder)
            collectStore(installed)
            total = diskUsage().total
        }
        return (evicted, total)
    }

    /// Saves `state`, keeping any later last use and opening `markOpened` recorded meanwhile (it
    /// takes only the short state lock, not the sync's). An opening is the learner's progress,
    /// sent to the LMS later: it is kept even for a block this sync removed.
    func saveLastUse(state: State) throws(ClientError) {
        try updateState { current throws(ClientError) in
            var merged = state
            for (folder, record) in current.courses {
                guard var mine = merged.courses[folder] else { continue }
                for (id, time) in record.lastUse where mine.lastUse[id] != nil { mine.lastUse[id] = max(time, mine.lastUse[id] ?? 0) }
                if let opened = record.opened {
                    var kept = mine.opened ?? [:]
                    for (id, time) in opened { kept[id] = max(time, kept[id] ?? 0) }
                    mine.opened = kept
                }
                merged.courses[folder] = mine
            }
            current = merged
        }
    }

    /// The course folders whose source now serves `courseID` instead of their course: refused
    /// unless `replacing`, and refused even then while answers given offline in them wait to be
    /// sent (replacing the course would delete them).
    func coursesReplaced(by courseID: String, from source: SyncSource, in state: State, replacing: Bool) throws(ClientError) -> [String] {
        let folders = state.courses.filter { $0.value.source == source.description && $0.value.courseID != courseID }.keys.sorted()
        for name in folders {
            let installed = state.courses[name]?.courseID ?? ""
            guard replacing else { throw .sync(.otherCourse(target: root + "/" + name, installed: installed, offered: courseID)) }
            let waiting = Outbox(folder: SyncClient.stateFolder(of: root + "/" + name)).entries().filter { $0.state == .pending || $0.state == .sending }
            guard waiting.isEmpty else {
                throw .invalidRequest("\(root)/\(name): \(waiting.count) answers given offline in course \(installed) wait to be sent (sync --submit); it is not replaced")
            }
        }
        return folders
    }

    /// The course folders a sync of `courseID` from `source` would replace (see above), as
    /// the target is now: what `sync --dry-run` checks.
    public func coursesReplaced(by courseID: String, from source: SyncSource, replacing: Bool) throws(ClientError) -> [String] {
        guard try kind() == .multiCourse else { return [] }
        return try coursesReplaced(by: courseID, from: source, in: readState(), replacing: replacing)
    }

    func freeFolderName(for courseID: String, in state: State) -> String {
        let base = Self.folderName(forCourse: courseID)
        var name = base
        var number = 2
        while state.courses[name] != nil { name = base + "-\(number)"; number += 1 }
        return name
    }

    /// What the target takes with only what is never evicted: its state and pages (see
    /// `overhead`), every course's shared folders and pinned blocks, contents counted once.
    func pinnedBytes(state: State, server: (folder: String, course: CourseView), installed: [String: InstalledCourse]) -> UInt64 {
        var room = ByteAllowance(left: .max)
        _ = room.take(overhead(for: server.course, in: server.folder))
        let mine = installed[server.folder]
        for (shared, offered) in server.course.sharedCosts { _ = room.take(mine?.costs[shared.usageID] ?? offered) }
        let pins = state.courses[server.folder]?.pins ?? []
        for id in server.course.offlineIDs where server.course.isPinned(id, pins: pins) {
            _ = room.take(mine?.costs[id] ?? server.course.cost(of: id))
        }
        for (name, view) in installed.sorted(by: { $0.key < $1.key }) where name != server.folder {
            let pins = state.courses[name]?.pins ?? []
            for id in view.installedIDs where view.isPinned(id, pins: pins) { _ = room.take(view.cost(of: id)) }
            for cost in view.sharedCosts { _ = room.take(cost) }
        }
        return UInt64.max - room.left
    }

    /// Each course's installed view, measured from the inventories only when the target has a
    /// budget (`InstalledCourse.init(courseRoot:measuring:)`). `known`: one course's local
    /// manifest, held in memory as its folder holds it.
    func installedViews(state: State, known: (folder: String, manifest: CourseManifest)? = nil) -> [String: InstalledCourse] {
        var views: [String: InstalledCourse] = [:]
        let measuring = state.budget != nil
        for folder in state.courses.keys {
            if let known, known.folder == folder {
                views[folder] = InstalledCourse(manifest: known.manifest, courseRoot: root + "/" + folder, measuring: measuring)
            } else if let view = InstalledCourse(courseRoot: root + "/" + folder, measuring: measuring) {
                views[folder] = view
            }
        }
        return views
    }

    // MARK: - Migration

    /// Moves a single-course target (`TARGET/manifest.json`, `TARGET/<type>/…`) into
    /// `TARGET/<course folder>/`, its sync state included: apps that read `TARGET/manifest.json`
    /// read `TARGET/<course folder>/manifest.json` from then on.
    func migrateSingleCourse(into state: State) throws(ClientError) -> State {
        let manifestPath = root + "/manifest.json"
        let manifest: CourseManifest
        do {
            guard let read = try ManifestFile.read(manifestPath) else { return state }
            manifest = read
        } catch {
            throw .notATarget(path: manifestPath, reason: "\(error)")
        }
        var state = state
        let folder = freeFolderName(for: manifest.courseID, in: state)
        let destination = root + "/" + folder
        try makeFolder(destination + "/" + Self.stateFolderName)
        let fm = FileManager.default
        // Block folders first, the manifest last: a migration cut short is found again next time.
        for name in (try? fm.contentsOfDirectory(atPath: root)) ?? [] where name != Self.stateFolderName && name != folder && name != "manifest.json" {
            guard rename(root + "/" + name, destination + "/" + name) == 0 else {
                throw .local(path: root + "/" + name, reason: "cannot move into \(destination): \(String(cString: strerror(errno)))")
            }
        }
        for name in (try? fm.contentsOfDirectory(atPath: stateFolder)) ?? [] where !["lock", "state.lock", "target.json", "store"].contains(name) {
            rename(stateFolder + "/" + name, destination + "/" + Self.stateFolderName + "/" + name)
        }
        var record = CourseRecord(courseID: manifest.courseID, source: "")
        let now = Date().timeIntervalSince1970
        for block in manifest.blocks where block.isOffline { record.lastUse[block.usageID] = now }
        state.courses[folder] = record
        try writeState(state)
        guard rename(manifestPath, destination + "/manifest.json") == 0 else {
            throw .local(path: manifestPath, reason: "cannot move into \(destination): \(String(cString: strerror(errno)))")
        }
        return state
    }
}
