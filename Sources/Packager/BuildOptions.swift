import BlockRenderer

/// Everything a build needs besides the course, built once by the caller and passed down.
public struct BuildOptions: Sendable {
    public var outputFolder: String
    /// ISO 8601, UTC, second precision: `2026-11-22T10:00:00Z`.
    public var publishedAt: String
    public var jobs: Int
    public var compressionLevel: Int32
    public var templates: PageTemplates
    /// Base of absolute LMS links for course paths that cannot be bundled (`https://lms.example.com`).
    public var lmsURL: String?
    public var generator: String
    /// How long to wait for another build holding the output folder's lock.
    public var lockTimeout: Double
    /// Folder holding Debian's `jquery/` and `katex/` (libjs-jquery, libjs-katex), read at build
    /// time into the shared runtime archive.
    public var runtimeSource: String
    public static let defaultRuntimeSource = "/usr/share/javascript"
    /// Where the build state and the static-file hash cache live: never inside the output
    /// folder, which holds only what is published.
    public var stateFolder: String

    public init(
        outputFolder: String, publishedAt: String, jobs: Int, compressionLevel: Int32 = 6,
        templates: PageTemplates = .defaults(), lmsURL: String? = nil,
        generator: String = "coursepack \(Version.current)", lockTimeout: Double = 0, stateFolder: String? = nil,
        runtimeSource: String = BuildOptions.defaultRuntimeSource
    ) {
        self.outputFolder = outputFolder
        self.publishedAt = publishedAt
        self.jobs = max(1, jobs)
        self.compressionLevel = compressionLevel
        self.templates = templates
        self.lmsURL = lmsURL
        self.generator = generator
        self.lockTimeout = lockTimeout
        self.runtimeSource = runtimeSource
        self.stateFolder = stateFolder ?? Self.defaultStateFolder(forOutput: outputFolder)
    }

    /// `DIR.coursepack-state`, beside the output folder: on the same file system (its files
    /// are renamed into place), outside what a web server or a bucket copy of `DIR` publishes,
    /// kept and removed together with `DIR` by whoever manages it, and never shared by two
    /// output folders by accident.
    public static func defaultStateFolder(forOutput outputFolder: String) -> String {
        var folder = outputFolder
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        return folder + ".coursepack-state"
    }
}

public enum Version {
    public static let current = "0.1.0"
}
