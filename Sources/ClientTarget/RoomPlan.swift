import Manifest
import SyncClient

/// What a course may hold within the target's budget and what must go to make room, in
/// priority order: every course's shared content and every pinned block (never evicted), this
/// course's pinned and requested blocks, installed blocks by last use, then (`fill`) the rest of
/// the course in course order. Without a budget: pinned, requested, and with `fill` everything.
struct RoomPlan {
    var keep = Set<String>()
    /// Taken only to fill the budget, in course order: the first to go if the estimate was short.
    var filled: [String] = []
    var evict: [(folder: String, id: String)] = []
    /// Asked for but did not fit.
    var overBudget: [String] = []
}

/// The bytes left of a budget as a plan takes them. A store content counts once, with the
/// first folder that lists it.
struct ByteAllowance {
    var left: UInt64
    var counted = Set<String>()

    /// Takes `bytes` when they fit; false, and nothing taken, when they do not.
    mutating func take(_ bytes: UInt64) -> Bool {
        guard bytes <= left else { return false }
        left -= bytes
        return true
    }

    /// What the folder adds beyond the contents already counted.
    func bytes(of cost: FolderCost) -> UInt64 {
        cost.contents.reduce(cost.own) { total, content in counted.contains(content.key) ? total : total + content.value }
    }

    /// Takes the folder's bytes when they fit (its new contents then count as taken).
    mutating func take(_ cost: FolderCost) -> Bool {
        guard take(bytes(of: cost)) else { return false }
        counted.formUnion(cost.contents.keys)
        return true
    }
}

extension ClientTarget {
    /// See `RoomPlan`.
    /// `overhead`: what the target takes besides its folders and their contents (state, outline
    /// pages), as this sync will leave it.
    func roomPlan(
        for course: CourseView, in courseFolder: String, requested: [String], fill: Bool, state: State,
        installed: [String: InstalledCourse], overhead: UInt64 = 0, skipping archived: Set<String> = []
    ) -> RoomPlan {
        let pins = state.courses[courseFolder]?.pins ?? []
        var plan = RoomPlan()
        guard let budget = state.budget else {
            plan.keep = Set(requested).union(course.offlineIDs.filter { course.isPinned($0, pins: pins) })
            if fill { plan.keep.formUnion(course.offlineIDs.filter { !archived.contains($0) || installed[courseFolder]?.costs[$0] != nil }) }
            return plan
        }
        var room = ByteAllowance(left: budget)
        _ = room.take(min(overhead, budget))
        takeNeverEvicted(&room, course: course, courseFolder: courseFolder, state: state, installed: installed)
        let mine = installed[courseFolder]
        for id in course.offlineIDs where course.isPinned(id, pins: pins) {
            _ = room.take(mine?.costs[id] ?? course.cost(of: id))
            plan.keep.insert(id)
        }
        for id in requested where !plan.keep.contains(id) {
            if room.take(mine?.costs[id] ?? course.cost(of: id)) { plan.keep.insert(id) } else { plan.overBudget.append(id) }
        }
        keepByLastUse(&plan, room: &room, course: course, courseFolder: courseFolder, state: state, installed: installed)
        guard fill else { return plan }
        // Blocks archived for not being opened come back only when asked for.
        for id in course.offlineIDs where !plan.keep.contains(id) && mine?.costs[id] == nil && !archived.contains(id) {
            if room.take(course.cost(of: id)) {
                plan.keep.insert(id)
                plan.filled.append(id)
            }
        }
        return plan
    }

    /// Shared content (the other courses' as installed, this one's as the server offers it
    /// unless installed already) and the other courses' pinned blocks: never evicted, so taken first.
    private func takeNeverEvicted(
        _ room: inout ByteAllowance, course: CourseView, courseFolder: String, state: State, installed: [String: InstalledCourse]
    ) {
        for (name, view) in installed.sorted(by: { $0.key < $1.key }) where name != courseFolder {
            for cost in view.sharedCosts { _ = room.take(cost) }
        }
        let mine = installed[courseFolder]
        for (shared, offered) in course.sharedCosts {
            _ = room.take(mine?.costs[shared.usageID] ?? offered)
        }
        for (name, view) in installed.sorted(by: { $0.key < $1.key }) where name != courseFolder {
            for id in view.installedIDs where view.isPinned(id, pins: state.courses[name]?.pins ?? []) { _ = room.take(view.cost(of: id)) }
        }
    }

    /// Installed blocks by last use, most recent first, kept while they fit; the rest make room.
    private func keepByLastUse(
        _ plan: inout RoomPlan, room: inout ByteAllowance, course: CourseView, courseFolder: String, state: State,
        installed: [String: InstalledCourse]
    ) {
        var others: [(folder: String, id: String, used: Double, cost: FolderCost)] = []
        for (name, view) in installed {
            let pins = state.courses[name]?.pins ?? []
            for id in view.installedIDs where !(name == courseFolder && plan.keep.contains(id)) && !view.isPinned(id, pins: pins) {
                // A block the server dropped goes anyway.
                if name == courseFolder, !course.offlineIDs.contains(id) { continue }
                others.append((name, id, state.courses[name]?.lastUse[id] ?? 0, view.cost(of: id)))
            }
        }
        others.sort { $0.used != $1.used ? $0.used > $1.used : ($0.folder, $0.id) < ($1.folder, $1.id) }
        for other in others {
            if room.take(other.cost) {
                if other.folder == courseFolder { plan.keep.insert(other.id) }
            } else {
                plan.evict.append((other.folder, other.id))
            }
        }
    }
}
