import Manifest
import SyncClient

extension ClientTarget {
    /// What `sync` would do, changing nothing (`sync --dry-run`).
    public struct SyncPreview: Sendable {
        /// Course folders whose source now serves this course: the sync would replace them.
        public var replaced: [String]
        /// Blocks and bytes to download and delete, before any budget.
        public var plan: SyncPlan
    }

    /// Fetches the server's manifest and plans the sync of its course into this target, as it
    /// is now; writes nothing.
    public func preview(_ request: SyncRequest) async throws(ClientError) -> SyncPreview {
        let server: CourseManifest
        do {
            server = try await SyncClient.serverManifest(request.source, timeouts: request.timeouts)
        } catch {
            throw .sync(error)
        }
        let replaced = try coursesReplaced(by: server.courseID, from: request.source, replacing: request.replaceCourse)
        let folder = try courseFolder(for: server.courseID)
        var options = SyncClient.Options(
            source: request.source, target: root + "/" + folder, selection: Set(request.selection), jobs: request.jobs, timeouts: request.timeouts)
        options.replaceCourse = request.replaceCourse
        do {
            return SyncPreview(replaced: replaced, plan: try await SyncClient(options: options).plan().0)
        } catch {
            throw .sync(error)
        }
    }
}
