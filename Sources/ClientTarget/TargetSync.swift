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
        /// Blocks asked for that did not fit in the budget.
        public var overBudget: [String] = []
        /// Courses removed because their source now serves this course (`replaceCourse`).
        public var replacedCourses: [String] = []
        public var installedBytes: UInt64 = 0
        public var budget: UInt64?
    }

    /// One sync of one course into the target. Bad requests (unknown pin or block, pinned
    /// content over the budget, a folder that is not a target) throw before anything changes.
    public func sync(_ request: SyncRequest, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws(ClientError) -> SyncReport {
        var report = SyncReport()
        let targetKind = try kind()
        // Fetched once, conditionally on the copy cached by the course's last sync from the same
        // source: an unchanged course costs one 304.
        let known = targetKind == .multiCourse ? try readState() : State()
        let cachedIn = known.courses.first { $0.value.source == request.source.description }.map { root + "/" + $0.key }
            ?? (targetKind == .singleCourse ? root : root + "/" + Self.stateFolderName + "/no-course")
        let fetched: FetchedManifest
        do {
            fetched = try await SyncClient(options: .init(source: request.source, target: cachedIn, timeouts: request.timeouts)).fetchManifest()
        } catch {
            throw .sync(error)
        }
        let server = fetched.manifest
        let course = CourseView(server)
        for id in request.pin + request.unpin + request.selection + (request.after.map { [$0] } ?? []) where !course.knows(id) {
            throw .unknownID(id: id, course: server.courseID)
        }
        if (request.next == nil) != (request.after == nil) { throw .invalidRequest("prefetch needs both the number of blocks and the block to start after") }
        let replaced = try coursesReplaced(by: server.courseID, from: request.source, in: known, replacing: request.replaceCourse)

        var state = known
        for name in replaced { state.courses[name] = nil }
        let folder = state.courses.first { $0.value.courseID == server.courseID }?.key ?? freeFolderName(for: server.courseID, in: known)
        report.courseFolder = folder
        var record = state.courses[folder] ?? CourseRecord(courseID: server.courseID, source: request.source.description)
        record.source = request.source.description
        record.pins = Array(Set(record.pins).union(request.pin).subtracting(request.unpin)).sorted()
        state.courses[folder] = record
        if let budget = request.budget { state.budget = budget }
        report.budget = state.budget

        // Pinned content over the budget is refused before the lock, a migration or a download.
        let installedNow = installedViews(state: state)
        if let budget = state.budget {
            let pinned = pinnedBytes(state: state, server: (folder, course), installed: installedNow)
            guard pinned <= budget else { throw .pinnedOverBudget(pinned: pinned, budget: budget) }
        }

        try makeFolder(stateFolder)
        let lock = try ClientTarget.lock(stateFolder + "/lock", waiting: .none)
        defer { withExtendedLifetime(lock) {} }
        // Read again under the lock: a sync that finished since the first read is not undone.
        if targetKind == .multiCourse {
            var fresh = try readState()
            for name in replaced { fresh.courses[name] = nil }
            var current = fresh.courses[folder] ?? record
            current.source = record.source
            current.pins = record.pins
            fresh.courses[folder] = current
            if let budget = request.budget { fresh.budget = budget }
            state = fresh
        }
        if targetKind == .singleCourse {
            let migrated = try migrateSingleCourse(into: State())
            report.migrated = true
            for (name, old) in migrated.courses {
                guard old.courseID == server.courseID else {
                    state.courses[name] = old
                    continue
                }
                var merged = old
                merged.source = record.source
                merged.pins = record.pins
                state.courses[folder] = nil
                state.courses[name] = merged
                report.courseFolder = name
            }
            // Another course's id may clean to the same folder name as the migrated one's: this
            // course then gets a folder of its own instead of syncing into (and replacing) it.
            if let taken = migrated.courses[folder], taken.courseID != server.courseID {
                let fresh = freeFolderName(for: server.courseID, in: state)
                state.courses[fresh] = record
                report.courseFolder = fresh
            }
        }
        // Removed once the lock is held and the course list is final; the record first, so that
        // a sync cut short leaves a stray folder the next one removes.
        if !replaced.isEmpty {
            try saveLastUse(state: state)
            for name in replaced { ZipReader.removeTree(root + "/" + name) }
            report.replacedCourses = replaced.compactMap { known.courses[$0]?.courseID }
        }
        let courseFolder = report.courseFolder
        let now = Date().timeIntervalSince1970
        // The course is recorded before its folder exists: a sync cut short leaves a folder the
        // next one knows, not a stray it would remove.
        try saveLastUse(state: state)
        try makeFolder(root + "/" + courseFolder)

        // Reconcile every course: strays removed, damaged blocks dropped (and fetched again below
        // when still wanted).
        report.repairs = reconcile(state: &state)
        var installed = installedViews(state: state)

        // What this course should hold, in priority order, and what must go to make room.
        let requested = course.requested(selection: request.selection, next: request.next, after: request.after)
        let room = roomPlan(
            for: course, in: courseFolder, requested: requested, fill: request.selection.isEmpty && request.next == nil,
            state: state, installed: installed)
        let (keep, filled, evict) = (room.keep, room.filled, room.evict)
        report.overBudget = room.overBudget
        for (name, id) in evict { installed[name]?.remove(id, courseRoot: root + "/" + name) }
        for (name, view) in installed where evict.contains(where: { $0.folder == name }) {
            try view.save(to: root + "/" + name)
        }
        report.evicted = evict.map(\.id)

        var options = SyncClient.Options(
            source: request.source, target: root + "/" + courseFolder, selection: keep, jobs: request.jobs, limits: request.limits,
            timeouts: request.timeouts)
        options.emptySelectionMeansAll = false
        options.maximumUnpackedBytes = request.maximumUnpackedBytes
        options.replaceCourse = request.replaceCourse
        let summary: SyncClient.Summary
        do {
            summary = try await SyncClient(options: options).sync(fetched: fetched, progress: progress)
        } catch {
            try? saveLastUse(state: state)
            throw .sync(error)
        }
        report.summary = summary
        try? ManifestFile.write(server, to: OutlinePage.publishedPath(courseRoot: root + "/" + courseFolder))
        let failed = Set(summary.failures.map(\.usageID))
        for block in summary.plan.downloads where !failed.contains(block.usageID) {
            state.courses[courseFolder]?.lastUse[block.usageID] = now
        }
        for id in requested where state.courses[courseFolder]?.lastUse[id] != nil { state.courses[courseFolder]?.lastUse[id] = now }

        // Sizes were estimated from archives before the download; the budget is enforced on
        // what the blocks now take on disk.
        installed = installedViews(state: state)
        let (evictedAfter, installedBytes) = try enforceBudget(on: &installed, state: state, courseFolder: courseFolder, filled: filled)
        report.evicted += evictedAfter
        report.installedBytes = installedBytes
        // Last use is kept for installed blocks only.
        for (name, view) in installed {
            let present = Set(view.installedIDs)
            let kept = (state.courses[name]?.lastUse ?? [:]).filter { present.contains($0.key) }
            state.courses[name]?.lastUse = kept
        }

        for (name, view) in installed { try OutlinePage.write(view.manifest, into: root + "/" + name) }
        try OutlinePage.writeTargetIndex(courses: installed.map { ($0.key, $0.value.manifest) }, into: root)
        try saveLastUse(state: state)
        return report
    }

    /// What the course may hold within the budget and what must go to make room, in priority
    /// order: other courses' runtimes and search indexes and every pinned block (never evicted),
    /// this course's pinned and requested blocks, installed blocks by last use, then (`fill`)
    /// the rest of the course in course order. Without a budget: pinned, requested, and with
    /// `fill` everything.
    struct RoomPlan {
        var keep: Set<String>
        /// Taken only to fill the budget, in course order: the first to go if the estimate was short.
        var filled: [String]
        var evict: [(folder: String, id: String)]
        /// Asked for but did not fit.
        var overBudget: [String]
    }

    func roomPlan(
        for course: CourseView, in courseFolder: String, requested: [String], fill: Bool, state: State,
        installed: [String: InstalledCourse]
    ) -> RoomPlan {
        var keep = Set<String>()
        var overBudget: [String] = []
        // Taken only to fill the budget, in course order: the first to go if the estimate was short.
        var filled: [String] = []
        var evict: [(folder: String, id: String)] = []
        if let budget = state.budget {
            var left = budget
            func take(_ bytes: UInt64) -> Bool {
                guard bytes <= left else { return false }
                left -= bytes
                return true
            }
            // Runtimes, search indexes and pinned blocks first: they are never evicted.
            for (name, view) in installed where name != courseFolder { _ = take(view.sharedBytes) }
            let runtimeInstalled = installed[courseFolder]?.manifest.runtime?.archive == course.manifest.runtime?.archive
            _ = take(runtimeInstalled ? installed[courseFolder]?.runtimeBytes ?? 0 : course.manifest.runtime?.size ?? 0)
            let searchInstalled = installed[courseFolder]?.manifest.search?.archive == course.manifest.search?.archive
            _ = take(searchInstalled ? installed[courseFolder]?.searchBytes ?? 0 : course.manifest.search?.size ?? 0)
            for (name, view) in installed where name != courseFolder {
                for id in view.installedIDs where view.isPinned(id, pins: state.courses[name]?.pins ?? []) { _ = take(view.bytes(of: id)) }
            }
            let mine = installed[courseFolder]
            let pinnedHere = course.offlineIDs.filter { course.isPinned($0, pins: state.courses[courseFolder]?.pins ?? []) }
            for id in pinnedHere {
                _ = take(mine?.bytes(of: id) ?? course.archiveBytes(of: id))
                keep.insert(id)
            }
            for id in requested where !keep.contains(id) {
                if take(mine?.bytes(of: id) ?? course.archiveBytes(of: id)) { keep.insert(id) } else { overBudget.append(id) }
            }
            // Installed blocks by last use, most recent first; the rest make room.
            var others: [(folder: String, id: String, used: Double, bytes: UInt64)] = []
            for (name, view) in installed {
                let pins = state.courses[name]?.pins ?? []
                for id in view.installedIDs where !(name == courseFolder && keep.contains(id)) && !view.isPinned(id, pins: pins) {
                    // A block the server dropped goes anyway.
                    if name == courseFolder, !course.offlineIDs.contains(id) { continue }
                    others.append((name, id, state.courses[name]?.lastUse[id] ?? 0, view.bytes(of: id)))
                }
            }
            others.sort { $0.used != $1.used ? $0.used > $1.used : ($0.folder, $0.id) < ($1.folder, $1.id) }
            for other in others {
                if take(other.bytes) {
                    if other.folder == courseFolder { keep.insert(other.id) }
                } else {
                    evict.append((other.folder, other.id))
                }
            }
            if fill {
                for id in course.offlineIDs where !keep.contains(id) && installed[courseFolder]?.installedIDs.contains(id) != true {
                    if take(course.archiveBytes(of: id)) {
                        keep.insert(id)
                        filled.append(id)
                    }
                }
            }
        } else {
            keep = Set(requested).union(course.offlineIDs.filter { course.isPinned($0, pins: state.courses[courseFolder]?.pins ?? []) })
            if fill { keep.formUnion(course.offlineIDs) }
        }
        return RoomPlan(keep: keep, filled: filled, evict: evict, overBudget: overBudget)
    }

    /// Sizes were estimated from archives before the download: the budget is enforced on what
    /// the blocks take on disk, blocks taken only to fill it first (last in course order
    /// first), then the least recently used. Returns the blocks evicted and the bytes installed.
    func enforceBudget(
        on installed: inout [String: InstalledCourse], state: State, courseFolder: String, filled: [String]
    ) throws(ClientError) -> (evicted: [String], installedBytes: UInt64) {
        var evicted: [String] = []
        if let budget = state.budget {
            var total = installed.values.reduce(0) { $0 + $1.totalBytes }
            var candidates: [(folder: String, id: String, used: Double)] = []
            for (name, view) in installed {
                let pins = state.courses[name]?.pins ?? []
                for id in view.installedIDs where !view.isPinned(id, pins: pins) {
                    candidates.append((name, id, state.courses[name]?.lastUse[id] ?? 0))
                }
            }
            // Blocks taken only to fill the budget go first (last in course order first), then
            // the least recently used.
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
            var touched = Set<String>()
            for candidate in candidates where total > budget {
                let bytes = installed[candidate.folder]?.bytes(of: candidate.id) ?? 0
                installed[candidate.folder]?.remove(candidate.id, courseRoot: root + "/" + candidate.folder)
                total -= min(total, bytes)
                evicted.append(candidate.id)
                touched.insert(candidate.folder)
            }
            for name in touched { try installed[name]?.save(to: root + "/" + name) }
            return (evicted, total)
        } else {
            return ([], installed.values.reduce(0) { $0 + $1.totalBytes })
        }
    }

    /// Saves `state`, keeping any later last-use time `markOpened` recorded meanwhile (it takes
    /// only the short state lock, not the sync's).
    func saveLastUse(state: State) throws(ClientError) {
        try updateState { current throws(ClientError) in
            var merged = state
            for (folder, record) in current.courses {
                guard var mine = merged.courses[folder] else { continue }
                for (id, time) in record.lastUse where mine.lastUse[id] != nil { mine.lastUse[id] = max(time, mine.lastUse[id] ?? 0) }
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

    func pinnedBytes(state: State, server: (folder: String, course: CourseView), installed: [String: InstalledCourse]) -> UInt64 {
        var total: UInt64 = (server.course.manifest.runtime?.size ?? 0) + (server.course.manifest.search?.size ?? 0)
        let pins = state.courses[server.folder]?.pins ?? []
        for id in server.course.offlineIDs where server.course.isPinned(id, pins: pins) {
            total += installed[server.folder]?.bytes(of: id) ?? server.course.archiveBytes(of: id)
        }
        for (name, view) in installed where name != server.folder {
            let pins = state.courses[name]?.pins ?? []
            for id in view.installedIDs where view.isPinned(id, pins: pins) { total += view.bytes(of: id) }
            total += view.sharedBytes
        }
        return total
    }

    func installedViews(state: State) -> [String: InstalledCourse] {
        var views: [String: InstalledCourse] = [:]
        for folder in state.courses.keys {
            if let view = InstalledCourse(courseRoot: root + "/" + folder) { views[folder] = view }
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
        for name in (try? fm.contentsOfDirectory(atPath: stateFolder)) ?? [] where name != "lock" && name != "state.lock" && name != "target.json" {
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

/// A server's manifest, seen as ids: which exist, which are offline blocks, what is under what.
struct CourseView: Sendable {
    let manifest: CourseManifest
    let offlineIDs: [String]
    let known: Set<String>
    let sizes: [String: UInt64]
    let parents: [String: [String]]

    init(_ manifest: CourseManifest) {
        self.manifest = manifest
        offlineIDs = manifest.blocks.filter(\.isOffline).map(\.usageID)
        var known = Set(manifest.blocks.map(\.usageID)).union(manifest.blocks.flatMap(\.parents)).union((manifest.outline ?? []).map(\.usageID))
        known.insert(manifest.courseID)
        self.known = known
        sizes = Dictionary(manifest.blocks.map { ($0.usageID, $0.size ?? 0) }, uniquingKeysWith: { a, _ in a })
        parents = Dictionary(manifest.blocks.map { ($0.usageID, $0.parents) }, uniquingKeysWith: { a, _ in a })
    }

    func knows(_ id: String) -> Bool { known.contains(id) }
    func archiveBytes(of id: String) -> UInt64 { sizes[id] ?? 0 }

    func isPinned(_ id: String, pins: [String]) -> Bool {
        pins.contains(manifest.courseID) || pins.contains(id) || (parents[id] ?? []).contains { pins.contains($0) }
    }

    /// The offline blocks asked for: the selection's, then the prefetch's, in course order.
    func requested(selection: [String], next: Int?, after: String?) -> [String] {
        var ids: [String] = []
        let selected = Set(selection)
        if !selected.isEmpty {
            ids = offlineIDs.filter { selected.contains($0) || (parents[$0] ?? []).contains { selected.contains($0) } || selected.contains(manifest.courseID) }
        }
        if let next, let after {
            // Online-only blocks cannot be installed: the next N are the next N offline ones.
            let blocks = manifest.blocks
            let start = blocks.firstIndex { $0.usageID == after }.map { $0 + 1 }
                ?? blocks.firstIndex { $0.parents.contains(after) || after == manifest.courseID } ?? blocks.count
            for block in blocks[start...].filter(\.isOffline).prefix(max(0, next)) where !ids.contains(block.usageID) {
                ids.append(block.usageID)
            }
        }
        return ids
    }
}
