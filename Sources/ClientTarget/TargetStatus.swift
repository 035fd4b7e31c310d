import Foundation
import Manifest
import SyncClient

extension ClientTarget {
    public struct StatusReport: Sendable {
        public var budget: UInt64?
        public var courses: [CourseStatus] = []
        public var bytes: UInt64 { courses.reduce(0) { $0 + $1.bytes } }
    }

    public struct CourseStatus: Sendable {
        public var folder: String
        public var courseID: String
        public var title: String
        public var publishedAt: String
        public var pins: [String]
        public var bytes: UInt64
        public var presentBlocks: Int
        public var offlineBlocks: Int
        public var lastUse: Double?
        public var blocks: [BlockStatus]
    }

    public struct BlockStatus: Sendable {
        public var usageID: String
        public var type: String
        public var displayName: String
        public var offline: Bool
        public var present: Bool
        public var bytes: UInt64
        public var pinned: Bool
        public var lastUse: Double?
    }

    /// What the target holds; reads only. A single-course target (not yet migrated) is shown
    /// as its one course.
    public func status() throws(ClientError) -> StatusReport {
        var report = StatusReport()
        var courses: [(folder: String, record: CourseRecord?)]
        switch try kind() {
        case .new: return report
        case .singleCourse: courses = [(".", nil)]
        case .multiCourse:
            let state = try readState()
            report.budget = state.budget
            courses = state.courses.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        for (folder, record) in courses {
            let courseRoot = root + "/" + folder
            guard let installed = InstalledCourse(courseRoot: courseRoot) else { continue }
            let published = (try? ManifestFile.read(OutlinePage.publishedPath(courseRoot: courseRoot))) ?? installed.manifest
            let pins = record?.pins ?? []
            let view = CourseView(published)
            var blocks: [BlockStatus] = []
            for block in published.blocks {
                let present = installed.blockBytes[block.usageID] != nil
                    && block.archive.flatMap(ArchivePath.installFolder(of:)).map { FileManager.default.fileExists(atPath: courseRoot + "/" + $0) } == true
                blocks.append(BlockStatus(
                    usageID: block.usageID, type: block.type, displayName: block.displayName ?? "", offline: block.isOffline, present: present,
                    bytes: installed.bytes(of: block.usageID), pinned: view.isPinned(block.usageID, pins: pins),
                    lastUse: record?.lastUse[block.usageID]))
            }
            report.courses.append(CourseStatus(
                folder: folder, courseID: installed.manifest.courseID,
                title: published.outline?.first { $0.type == "course" }?.displayName ?? "",
                publishedAt: installed.manifest.publishedAt, pins: pins, bytes: installed.totalBytes,
                presentBlocks: blocks.filter(\.present).count, offlineBlocks: blocks.filter(\.offline).count,
                lastUse: record?.lastUse.values.max(), blocks: blocks))
        }
        return report
    }
}
