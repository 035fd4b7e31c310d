import Diagnostics
import Foundation

/// What a build did, for people (summary lines) and machines (`--report FILE`).
public struct BuildReport: Codable, Sendable {
    public struct Counts: Codable, Sendable, Equatable {
        public var blocks = 0
        public var built = 0
        public var reused = 0
        public var removed = 0
        public var failed = 0
        public var offlineFalse = 0
        /// Blocks whose page was made; the rest had the inputs of the last build.
        public var rendered = 0
        /// Search documents whose text was read from their block's page; the others were taken
        /// from the last build's search index.
        public var searchTextsRead = 0
        /// Block definition files read from the course export; the others were taken from the
        /// state folder, unchanged since the last build read them (`KeptBlockFiles`).
        public var blockFilesRead = 0

        enum CodingKeys: String, CodingKey {
            case blocks, built, reused, removed, failed, rendered
            case offlineFalse = "offline_false"
            case searchTextsRead = "search_texts_read"
            case blockFilesRead = "block_files_read"
        }
    }

    public struct Durations: Codable, Sendable {
        public var loadSeconds = 0.0
        public var packageSeconds = 0.0
        public var totalSeconds = 0.0
        /// Part of `packageSeconds`: extracting the text and writing the search index.
        public var searchSeconds = 0.0
        /// The parts of `packageSeconds`, in order, so an operator can see where a build's time
        /// goes: reading the previous publish, deciding each block's inputs and page facts,
        /// rendering and archiving the blocks, composing and writing the manifest (the search
        /// index included), and saving the state, removing what is no longer named and recording.
        public var previousSeconds = 0.0
        public var planSeconds = 0.0
        public var blocksSeconds = 0.0
        public var manifestSeconds = 0.0
        public var finishSeconds = 0.0

        enum CodingKeys: String, CodingKey {
            case loadSeconds = "load_seconds"
            case packageSeconds = "package_seconds"
            case totalSeconds = "total_seconds"
            case searchSeconds = "search_seconds"
            case previousSeconds = "previous_seconds"
            case planSeconds = "plan_seconds"
            case blocksSeconds = "blocks_seconds"
            case manifestSeconds = "manifest_seconds"
            case finishSeconds = "finish_seconds"
        }

        /// The phases of a build that loaded the course at `loaded`.
        mutating func record(started: Date, loaded: Date, finished: Date) {
            loadSeconds = loaded.timeIntervalSince(started)
            packageSeconds = finished.timeIntervalSince(loaded)
            totalSeconds = finished.timeIntervalSince(started)
        }
    }

    public var courseID: String
    public var publishedAt: String
    public var outputFolder: String
    public var counts = Counts()
    /// Blocks that failed; their previous archive and manifest entry were kept.
    public var errors: [Diagnostic] = []
    /// Recoverable problems: links that could not be resolved, content that needs the network.
    public var warnings: [Diagnostic] = []
    public var durations = Durations()
    /// True when the course, options and output were exactly as the last clean build left
    /// them, so nothing was loaded, rendered or written.
    public var inputsUnchanged = false

    public var unresolvedLinks: [Diagnostic] { warnings.filter { $0.reference != nil } }

    enum CodingKeys: String, CodingKey {
        case courseID = "course_id"
        case publishedAt = "published_at"
        case outputFolder = "out"
        case counts, errors, warnings, durations
        case inputsUnchanged = "inputs_unchanged"
    }
}

public struct Diagnostic: Codable, Sendable, Equatable, CustomStringConvertible {
    /// The stable id (`CP201`) that docs/diagnostics.md explains, when the problem has one.
    public var id: String?
    /// Usage id of the block concerned, when known.
    public var block: String?
    /// Export-relative file the problem is in.
    public var file: String?
    public var message: String
    /// The reference text as written, for unresolved links.
    public var reference: String?

    public init(block: String?, file: String?, message: String, reference: String? = nil, id: DiagnosticID? = nil) {
        self.id = id?.code
        self.block = block
        self.file = file
        self.message = QuotedText.bounded(message)
        self.reference = reference.map(QuotedText.bounded)
    }

    public var description: String {
        [file, block.map { "(\($0))" }, message].compactMap { $0 }.joined(separator: " ")
    }

    /// `warning[CP201]`, or `warning` alone for a problem without an id.
    public func label(_ severity: String) -> String {
        id.map { "\(severity)[\($0)]" } ?? severity
    }
}
