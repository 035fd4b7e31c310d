import Foundation
import Manifest
import SyncClient

extension ClientTarget {
    public struct StatusReport: Sendable {
        public var budget: UInt64?
        public var courses: [CourseStatus] = []
        /// Seconds after which unpinned blocks not opened are removed; nil: never.
        public var expireAfter: Double?
        /// The whole target on disk by part, as `du -sb` counts it: what the budget holds.
        public var usage = DiskUsage()
        public var bytes: UInt64 { usage.total }
    }

    public struct CourseStatus: Sendable {
        public var folder: String
        public var courseID: String
        public var title: String
        public var publishedAt: String
        public var pins: [String]
        public var bytes: UInt64
        public var presentBlocks: Int
        /// Blocks the local manifest names whose folders are missing or damaged.
        public var damagedBlocks: Int
        /// What a sync killed meanwhile left (staging folders, partial manifests), which the
        /// next sync removes; relative to the course folder.
        public var leftovers: [String]
        public var offlineBlocks: Int
        public var lastUse: Double?
        public var blocks: [BlockStatus]
        /// The runtime's and the search index's folders (`runtime/<hash>`…) when they are
        /// missing or differ from the archive the local manifest names.
        public var sharedDamage: [(folder: String, damage: Damage)] = []
        /// Why the course's `manifest.json` is there but cannot be used (the next sync repairs it).
        public var manifestProblem: String?
    }

    public enum Damage: Sendable, Equatable {
        case missing
        case damaged(String)
    }

    public struct BlockStatus: Sendable {
        public var usageID: String
        public var type: String
        public var displayName: String
        public var offline: Bool
        /// Installed, and its files are as they were installed.
        public var present: Bool
        /// Installed (the local manifest names it) but its folder is gone: `missing`, or its
        /// files differ from what was installed: `damaged`. The next sync repairs both.
        public var damage: Damage?
        public var bytes: UInt64
        public var pinned: Bool
        public var lastUse: Double?
    }

    /// What the target holds; reads only. A single-course target (not yet migrated) is shown
    /// as its one course. `readingBytes`: every installed file's bytes are checked against
    /// what was installed, not only its presence and size.
    public func status(readingBytes: Bool = false) throws(ClientError) -> StatusReport {
        var report = StatusReport()
        var courses: [(folder: String, record: CourseRecord?)]
        switch try kind() {
        case .new: return report
        case .singleCourse: courses = [(".", nil)]
        case .multiCourse:
            let state = try readState()
            report.budget = state.budget
            report.expireAfter = state.expireAfter
            courses = state.courses.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        report.courses = courses.compactMap { courseStatus(folder: $0.folder, record: $0.record, readingBytes: readingBytes) }
        report.usage = diskUsage()
        return report
    }

    /// One course's status; nil for a folder that holds nothing of a course.
    func courseStatus(folder: String, record: CourseRecord?, readingBytes: Bool) -> CourseStatus? {
        let courseRoot = root + "/" + folder
        guard let installed = InstalledCourse(courseRoot: courseRoot) else {
            // Its first sync did not get as far as its manifest (only leftovers to show), or
            // the manifest is damaged.
            var problem: String?
            do {
                _ = try ManifestFile.read(courseRoot + "/manifest.json")
            } catch {
                problem = "\(error)"
            }
            guard record != nil || problem != nil else { return nil }
            return CourseStatus(
                folder: folder, courseID: record?.courseID ?? "", title: "",
                publishedAt: problem == nil ? "never (no local manifest yet)" : "unknown (its manifest cannot be read)", pins: record?.pins ?? [], bytes: 0,
                presentBlocks: 0, damagedBlocks: 0, leftovers: SyncLeftovers(target: courseRoot).find(), offlineBlocks: 0, lastUse: nil, blocks: [],
                manifestProblem: problem)
        }
        let published = (try? ManifestFile.read(OutlinePage.publishedPath(courseRoot: courseRoot))) ?? installed.manifest
        let pins = record?.pins ?? []
        let view = CourseView(published)
        var blocks: [BlockStatus] = []
        blocks.reserveCapacity(published.blocks.count)
        // By usage id, the first where one is listed twice: a search of the installed entries
        // for each block made `status` of a 92,000-block course take three minutes.
        var installedPositions: [String: Int] = [:]
        installedPositions.reserveCapacity(installed.manifest.blocks.count)
        for (position, block) in installed.manifest.blocks.enumerated() where installedPositions[block.usageID] == nil {
            installedPositions[block.usageID] = position
        }
        for block in published.blocks {
            // Where it was installed from, which may differ from where the server has it now.
            let installedEntry = installed.blockBytes[block.usageID] == nil
                ? nil : installedPositions[block.usageID].map { installed.manifest.blocks[$0] }
            let damage = installedEntry.flatMap { Self.damage(of: $0, in: courseRoot, readingBytes: readingBytes) }
            let present = installed.blockBytes[block.usageID] != nil && damage == nil
            blocks.append(BlockStatus(
                usageID: block.usageID, type: block.type, displayName: block.displayName ?? "", offline: block.isOffline, present: present,
                damage: damage, bytes: installed.bytes(of: block.usageID), pinned: view.isPinned(block.usageID, pins: pins),
                lastUse: record?.lastUse[block.usageID]))
        }
        let shared = SharedContent.all(in: installed.manifest).compactMap { shared -> (String, Damage)? in
            let archive = shared.archive
            let entry = BlockEntry(usageID: shared.usageID, type: shared.kind.rawValue, displayName: nil, parents: [], archive: archive.archive, sha256: archive.sha256)
            return Self.damage(of: entry, in: courseRoot, readingBytes: readingBytes).map { (String(archive.archive.dropLast(4)), $0) }
        }
        return CourseStatus(
            folder: folder, courseID: installed.manifest.courseID,
            title: published.outline?.first { $0.type == "course" }?.displayName ?? "",
            publishedAt: installed.manifest.publishedAt, pins: pins, bytes: installed.totalBytes,
            presentBlocks: blocks.filter(\.present).count, damagedBlocks: blocks.filter { $0.damage != nil }.count,
            leftovers: SyncLeftovers(target: courseRoot).find(), offlineBlocks: blocks.filter(\.offline).count,
            lastUse: record?.lastUse.values.max(), blocks: blocks, sharedDamage: shared)
    }

    /// An installed block's folder compared with its inventory; nil when it is as installed or
    /// nothing records how it was installed (a migrated target).
    static func damage(of block: BlockEntry, in courseRoot: String, readingBytes: Bool) -> Damage? {
        guard let archive = block.archive, let folder = ArchivePath.installFolder(of: archive) else { return nil }
        var info = stat()
        guard stat(courseRoot + "/" + folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return .missing }
        return BlockInventory.damage(
            courseRoot: courseRoot, stateFolder: courseRoot + "/" + stateFolderName, blockFolder: folder, archiveSHA256: block.sha256,
            readingBytes: readingBytes
        ).map(Damage.damaged)
    }
}
