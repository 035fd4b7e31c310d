import FileSystem
import Foundation
import Manifest
import SyncClient
import ZipArchive

/// A device folder holding several courses under one lock and one storage budget:
///
///     TARGET/index.html                   the courses, linking each outline page
///     TARGET/.coursepack-sync/            lock and target.json (budget, pins, last use)
///     TARGET/<course folder>/manifest.json, index.html (outline), _navigation/, <type>/<name>/…
///     TARGET/<course folder>/.coursepack-sync/   that course's sync state (SyncClient's)
///
/// Each course folder is what `SyncClient` keeps in sync; this type decides which blocks it may
/// install (pins, requests, prefetch, the budget), evicts the least recently used, and repairs
/// what it finds damaged before every sync.
///
/// An app embedding the library calls what the command line calls: `preview` (`sync --dry-run`),
/// `sync` (its steps: `fetchManifest`, `check`, `prepare`, `settle`, `reconcile`, `makeRoom`,
/// `install`, `recordUse`, `finish`), `status`, `markOpened`, `recordAnswer` and `submitAnswers`.
public struct ClientTarget: Sendable {
    public let root: String

    public init(root: String) {
        var root = root
        while root.count > 1, root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    public static let stateFolderName = ".coursepack-sync"
    /// Frame pages with previous/next links around each installed page, per course.
    public static let navigationFolderName = "_navigation"

    var stateFolder: String { root + "/" + Self.stateFolderName }
    var statePath: String { stateFolder + "/target.json" }

    /// A course's folder name: the course id without `course-v1:`, with anything but letters,
    /// digits and `+-._` made `_`, never hidden.
    public static func folderName(forCourse courseID: String) -> String {
        let bare = courseID.hasPrefix("course-v1:") ? String(courseID.dropFirst("course-v1:".count)) : courseID
        var name = String(bare.unicodeScalars.map { scalar -> Character in
            let allowed = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "+-._".unicodeScalars.contains(scalar))
            return allowed ? Character(scalar) : "_"
        })
        while name.hasPrefix(".") { name = "_" + name.dropFirst() }
        if name.isEmpty || name == Self.navigationFolderName { name = "course_" + name }
        return String(name.prefix(200))
    }

    public enum Kind: Sendable, Equatable {
        /// Nothing there, or an empty folder.
        case new
        /// This layout.
        case multiCourse
        /// A folder synced before targets held several courses: `TARGET/manifest.json`.
        case singleCourse
    }

    /// What `root` is; an error when it is a folder with other things in it, or not a folder.
    /// This target, when something has been synced into it; `notATarget` otherwise.
    public func existing() throws(ClientError) -> ClientTarget {
        guard try kind() != .new else { throw .notATarget(path: root, reason: "nothing has been synced here") }
        return self
    }

    public func kind() throws(ClientError) -> Kind {
        var info = stat()
        guard stat(root, &info) == 0 else { return .new }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .notATarget(path: root, reason: "not a folder") }
        if FileManager.default.fileExists(atPath: statePath) { return .multiCourse }
        if FileManager.default.fileExists(atPath: root + "/manifest.json") { return .singleCourse }
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { $0 != Self.stateFolderName }
        guard entries.isEmpty else {
            throw .notATarget(path: root, reason: "holds \(entries.sorted().prefix(3).joined(separator: ", ")) but no coursepack state; refusing to sync into it")
        }
        return .new
    }

    // MARK: - State

    public struct State: Codable, Sendable, Equatable {
        /// Bytes the installed blocks and runtimes of every course may take; nil: no limit.
        public var budget: UInt64?
        /// Seconds after which an unpinned block not opened is removed (`--expire-after`); nil: never.
        public var expireAfter: Double?
        /// Course folder → its record.
        public var courses: [String: CourseRecord] = [:]

        public init() {}

        enum CodingKeys: String, CodingKey {
            case budget, courses
            case expireAfter = "expire_after"
        }
    }

    public struct CourseRecord: Codable, Sendable, Equatable {
        public var courseID: String
        public var source: String
        /// Course, chapter, sequential, unit or block ids never evicted.
        public var pins: [String] = []
        /// Usage id → last use (seconds since 1970): install, or `markOpened`.
        public var lastUse: [String: Double] = [:]
        /// Usage id → when the learner last opened it (`markOpened` only), for progress.
        public var opened: [String: Double]?
        /// Usage id → the opening the LMS has been told about as a completion.
        public var completionsSent: [String: Double]?
        /// Blocks removed for not being opened within `expireAfter`: a sync that fills the
        /// budget does not bring them back; asking for them does.
        public var archived: [String]?

        enum CodingKeys: String, CodingKey {
            case courseID = "course_id"
            case source, pins, opened
            case lastUse = "last_use"
            case completionsSent = "completions_sent"
            case archived
        }
    }

    public func readState() throws(ClientError) -> State {
        let bytes: [UInt8]
        do {
            guard let read = try WholeFile.read(statePath, atMost: WholeFile.stateLimit) else { return State() }
            bytes = read
        } catch {
            throw .notATarget(path: statePath, reason: "cannot be read: \(error.reason ?? "\(error)")")
        }
        var state: State
        do {
            state = try JSONDecoder().decode(State.self, from: Data(bytes))
        } catch {
            throw .notATarget(path: statePath, reason: "cannot be read: \(error)")
        }
        Openings.apply(Openings.read(stateFolder), to: &state)
        return state
    }

    /// The course folders `target.json` lists, sorted, without decoding their records.
    func readCourseFolders() throws(ClientError) -> [String] {
        struct Skipped: Decodable {
            init(from decoder: any Decoder) throws {}
        }
        struct Folders: Decodable {
            var courses: [String: Skipped]?
        }
        do {
            guard let bytes = try WholeFile.read(statePath, atMost: WholeFile.stateLimit) else { return [] }
            return try JSONDecoder().decode(Folders.self, from: Data(bytes)).courses?.keys.sorted() ?? []
        } catch {
            throw .notATarget(path: statePath, reason: "cannot be read: \(error)")
        }
    }

    /// `state`, read by `readState` under the state lock, replaces `target.json`; the openings
    /// it took in are then in it, and their journal goes.
    func writeState(_ state: State) throws(ClientError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            let data = try encoder.encode(state)
            try DurableFile.replace(statePath, with: [UInt8](data))
        } catch {
            throw .local(path: statePath, reason: "cannot be written: \(error)")
        }
        Openings.clear(stateFolder)
    }

    /// Reads, changes and writes the state under its own short lock, so that `markOpened`
    /// during a long sync is not lost when the sync saves what it did.
    /// An exclusive lock on a lock file in the target's state folder.
    static func lock(_ path: String, waiting: FileLock.Waiting) throws(ClientError) -> FileLock {
        do {
            return try FileLock(.lockFile(path), waiting: waiting)
        } catch .busy {
            throw .locked(path: path)
        } catch {
            throw .local(path: path, reason: "\(error)")
        }
    }

    func updateState(_ change: (inout State) throws(ClientError) -> Void) throws(ClientError) {
        try makeFolder(stateFolder)
        let lock = try Self.lock(stateFolder + "/state.lock", waiting: .forever)
        defer { withExtendedLifetime(lock) {} }
        var state = try readState()
        try change(&state)
        try writeState(state)
    }

    // MARK: - Opening a block

    /// Records that `blockID` was opened (for LRU eviction) and returns its page's path.
    public func markOpened(_ blockID: String, at time: Date = Date()) throws(ClientError) -> String {
        guard try kind() == .multiCourse else { throw .notATarget(path: root, reason: "no course has been synced here") }
        // Only the courses target.json lists (a folder left on disk by a replaced course is not
        // one), read without the rest of the state: at 92,000 blocks it is 11 MB of JSON, and
        // reading and rewriting it whole took most of a second per opening. An opening is
        // appended to a journal instead (`Openings`), which the next read of the state takes in.
        for folder in try readCourseFolders() {
            guard let block = BlockLocations.location(of: blockID, courseRoot: root + "/" + folder) else { continue }
            guard let page = block.installedPage(courseRoot: root + "/" + folder)
            else { throw .notInstalled(blockID: blockID, reason: block.offline ? "not downloaded to this device" : "needs the network (\(block.reason ?? "online only"))") }
            try makeFolder(stateFolder)
            let long = try appendOpening(Openings.Opening(folder: folder, usageID: blockID, time: time.timeIntervalSince1970))
            // A journal kept short: every read of the state reads it whole.
            if long { try updateState { _ throws(ClientError) in } }
            return page
        }
        throw .unknownID(id: blockID, course: nil)
    }

    /// Appends `opening` to the journal under the state lock, released on return.
    private func appendOpening(_ opening: Openings.Opening) throws(ClientError) -> Bool {
        let lock = try Self.lock(stateFolder + "/state.lock", waiting: .forever)
        defer { withExtendedLifetime(lock) {} }
        return try Openings.append(opening, in: stateFolder)
    }

    // MARK: - Progress made offline

    /// Blocks of the course in `folder` opened since the LMS was last told, in usage-id order.
    public func pendingCompletions(inCourseFolder folder: String) throws(ClientError) -> [String] {
        guard let record = try readState().courses[folder] else { return [] }
        let sent = record.completionsSent ?? [:]
        return (record.opened ?? [:]).filter { id, time in (sent[id] ?? -1) < time }.keys.sorted()
    }

    /// Records that the LMS accepted these blocks' completions, as of the openings just sent.
    public func markCompletionsSent(_ ids: [String], inCourseFolder folder: String) throws(ClientError) {
        try updateState { state throws(ClientError) in
            guard var record = state.courses[folder] else { return }
            var sent = record.completionsSent ?? [:]
            for id in ids { sent[id] = record.opened?[id] ?? Date().timeIntervalSince1970 }
            record.completionsSent = sent
            state.courses[folder] = record
        }
    }

    func makeFolder(_ path: String) throws(ClientError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .local(path: path, reason: "cannot create the folder")
        }
    }
}

extension ClientTarget {
    /// The folder of the course `courseID` in this target: the one a sync recorded, or the one
    /// its first sync will make. Reads only.
    public func courseFolder(for courseID: String) throws(ClientError) -> String {
        switch try kind() {
        case .singleCourse:
            // Another course is not synced into the old layout: the sync migrates it first.
            guard let top = try? ManifestFile.readWithoutBlocks(root + "/manifest.json"), top.courseID != courseID else { return "." }
            var taken = State()
            taken.courses[Self.folderName(forCourse: top.courseID)] = CourseRecord(courseID: top.courseID, source: "")
            return freeFolderName(for: courseID, in: taken)
        case .new:
            return Self.folderName(forCourse: courseID)
        case .multiCourse:
            let state = try readState()
            return state.courses.first { $0.value.courseID == courseID }?.key ?? freeFolderName(for: courseID, in: state)
        }
    }
}

extension ClientTarget {
    /// The course folders of this target with their local manifests: the target itself when it
    /// holds one course at its top (a course folder, or a folder synced before targets held
    /// several courses), each course of the target otherwise.
    public func courseRoots() throws(ClientError) -> [(root: String, manifest: CourseManifest)] {
        var found: [(String, CourseManifest)] = []
        for path in try courseFolders() {
            do {
                if let manifest = try ManifestFile.read(path + "/manifest.json") { found.append((path, manifest)) }
            } catch {
                throw .notATarget(path: path + "/manifest.json", reason: "\(error)")
            }
        }
        return found
    }

    /// The course folders `courseRoots` reads, each holding a local manifest, without reading
    /// them.
    public func courseFolders() throws(ClientError) -> [String] {
        let roots: [String]
        switch try kind() {
        case .new: throw .notATarget(path: root, reason: "nothing has been synced here")
        case .singleCourse: roots = [root]
        case .multiCourse: roots = try readCourseFolders().map { root + "/" + $0 }
        }
        return roots.filter { FileManager.default.fileExists(atPath: $0 + "/manifest.json") }
    }

    /// Records an answer a page posted (`{usage_id, timestamp, fields}`) in the outbox of the
    /// course that has its block installed; returns the entry.
    public func recordAnswer(_ data: Data) throws(ClientError) -> AnswerEntry {
        let (entry, outbox) = try placeAnswer(data)
        do {
            try outbox.add(entry)
        } catch {
            throw .local(path: DurableFile.folder(of: outbox.path), reason: "\(error)")
        }
        return entry
    }

    /// The outbox entry for an answer a page posted, and the outbox of the course that has its
    /// block installed, without recording it: a host that records many answers (`serve`) adds
    /// it with its own index and quota. `keepingID`: see `PostedAnswer.entry`.
    public func placeAnswer(_ data: Data, keepingID: Bool = true) throws(ClientError) -> (entry: AnswerEntry, outbox: Outbox) {
        var refusal: OutboxError?
        for path in try courseFolders() {
            do {
                let entry = try PostedAnswer.entry(from: data, keepingID: keepingID) { usageID in
                    BlockLocations.location(of: usageID, courseRoot: path).map { Self.answerable($0, courseRoot: path) }
                }
                return (entry, Outbox(folder: SyncClient.stateFolder(of: path)))
            } catch {
                refusal = refusal ?? error
            }
        }
        throw .invalidRequest(refusal.map { "\($0)" } ?? "the answer names no course of this target")
    }

    /// A listed block as an answer needs it: only an offline block whose folder is in place has a
    /// page on this device that could have posted the answer.
    static func answerable(_ location: BlockLocations.Location, courseRoot: String) -> PostedAnswer.Listed {
        guard location.offline else {
            return .init(contentHash: location.contentHash, refusal: PostedAnswer.Listed.onlineOnly(reason: location.reason))
        }
        let installed = location.installedPage(courseRoot: courseRoot) != nil
        return .init(contentHash: location.contentHash, refusal: installed ? nil : PostedAnswer.Listed.notInstalled)
    }
}
