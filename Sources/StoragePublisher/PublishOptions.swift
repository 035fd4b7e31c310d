import Crypto
import FileSystem
import Foundation
import Manifest

public struct PublishOptions: Sendable {
    /// How long an archive no manifest names any more stays downloadable.
    public var keepRemoved: TimeInterval
    /// Uploads in flight at once.
    public var jobs: Int
    public var dryRun: Bool
    /// Every client and CDN must revalidate the manifest before using it.
    public var cacheControlManifest: String
    /// Archives may be cached, and are revalidated (by ETag) before use: a block's archive keeps
    /// its name when its content changes.
    public var cacheControlArchives: String
    public var now: @Sendable () -> Date
    /// Where the course goes within the target: its own folder (the default) or the target itself.
    public var layout: PublishLayout

    public static let defaultCacheControlManifest = "no-cache, max-age=0, must-revalidate"
    public static let defaultCacheControlArchives = "public, no-cache"

    public init(
        keepRemoved: TimeInterval = 24 * 3600, jobs: Int = 4, dryRun: Bool = false,
        cacheControlManifest: String = PublishOptions.defaultCacheControlManifest,
        cacheControlArchives: String = PublishOptions.defaultCacheControlArchives,
        now: @escaping @Sendable () -> Date = { Date() }, layout: PublishLayout = .perCourse
    ) {
        self.keepRemoved = keepRemoved
        self.jobs = max(jobs, 1)
        self.dryRun = dryRun
        self.cacheControlManifest = cacheControlManifest
        self.cacheControlArchives = cacheControlArchives
        self.now = now
        self.layout = layout
    }
}
