import BlockRenderer
import FileSystem
import Foundation

/// Everything a build needs besides the course, built once by the caller and passed down. The
/// values a build cannot work with are refused here, so a library caller gets the checks the
/// command line gets.
public struct BuildOptions: Sendable {
    public var outputFolder: String
    public private(set) var publishedAt: PublishTime
    /// Worker threads, at least 1.
    public private(set) var jobs: Int
    /// Deflate level, 1 to 9.
    public private(set) var compressionLevel: Int32
    public var templates: PageTemplates
    /// Base of absolute LMS links for course paths that cannot be bundled (`https://lms.example.com`).
    public var lmsURL: String?
    /// Where the output folder is served (`https://cdn.example.org/courses/<course folder>/`,
    /// ending in `/`): `offline_download.file_url` is this plus the archive's path, absolute as
    /// the official apps expect. Nil: relative to the manifest.
    public private(set) var publicURL: String?
    public var generator: String
    /// How long to wait for another build holding the output folder's lock.
    public private(set) var lockTimeout: Double
    /// Folder holding Debian's `jquery/` and `katex/` (libjs-jquery, libjs-katex), read at build
    /// time into the shared runtime archive.
    public var runtimeSource: String
    public static let defaultRuntimeSource = "/usr/share/javascript"
    /// Where the build state and the static-file hash cache live: never inside the output
    /// folder, which holds only what is published.
    public var stateFolder: String
    /// Now, in nanoseconds on the clock file times are taken from: files changed shortly before
    /// it are not trusted to be final (`TreeStamp.settleMargin`). Tests set it ahead instead of
    /// waiting for the clock to pass their own writes.
    public var now: @Sendable () -> Int64 = FileStamp.now
    /// False where the process exits right after the build (the command line): the build's
    /// tables are then left to the exit instead of freed one by one (`LeftForExit`). A caller
    /// that builds again in the same process keeps the default.
    public var freesMemoryWhenDone = true

    /// `publishedAt`: ISO 8601 (see `PublishTime`).
    public init(
        outputFolder: String, publishedAt: String, jobs: Int, compressionLevel: Int32 = 6,
        templates: PageTemplates = .defaults(), lmsURL: String? = nil,
        generator: String = "coursepack \(Version.current)", lockTimeout: Double = 0, stateFolder: String? = nil,
        runtimeSource: String = BuildOptions.defaultRuntimeSource, publicURL: String? = nil
    ) throws(BuildError) {
        guard jobs >= 1 else { throw .invalidOption("jobs must be at least 1, not \(jobs)") }
        guard (1...9).contains(compressionLevel) else {
            throw .invalidOption("the compression level must be between 1 and 9, not \(compressionLevel)")
        }
        guard lockTimeout >= 0, lockTimeout.isFinite else {
            throw .invalidOption("the lock timeout must be a number of seconds, 0 or more, not \(lockTimeout)")
        }
        guard !outputFolder.isEmpty else { throw .invalidOption("the output folder is empty") }
        self.outputFolder = outputFolder
        self.publishedAt = try PublishTime(parsing: publishedAt)
        self.jobs = jobs
        self.compressionLevel = compressionLevel
        self.templates = templates
        self.lmsURL = lmsURL
        self.generator = generator
        self.lockTimeout = lockTimeout
        self.runtimeSource = runtimeSource
        self.stateFolder = stateFolder ?? Self.defaultStateFolder(forOutput: outputFolder)
        self.publicURL = try publicURL.map(Self.publicBase)
    }

    /// An absolute http(s) URL with a host, no query, fragment or credentials, ending in `/`.
    static func publicBase(_ text: String) throws(BuildError) -> String {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.query == nil, url.fragment == nil, url.user == nil, url.password == nil,
            !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f })
        else {
            throw .invalidOption("the public URL must be an absolute http(s) URL of the folder, without query, fragment or credentials, not \"\(text)\"")
        }
        return text.hasSuffix("/") ? text : text + "/"
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
