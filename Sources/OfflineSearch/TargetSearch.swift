import Diagnostics
import ClientTarget
import CourseSearch
import Foundation
import Manifest
import SyncClient

/// One block found by `TargetSearch`.
public struct SearchResult: Sendable, Equatable, Encodable {
    public var courseID: String
    public var usageID: String
    public var type: String
    public var title: String
    /// Chapter, subsection and unit, outermost first.
    public var path: [String]
    /// The installed page's path; nil when the block is not on this device.
    public var page: String?
    /// `installed`, `not_installed` (an offline block this device has not downloaded) or
    /// `online_only` (a block with no offline page).
    public var state: String
    public var snippet: String
    /// BM25, higher is better.
    public var score: Double

    enum CodingKeys: String, CodingKey {
        case courseID = "course_id"
        case usageID = "usage_id"
        case type, title, path, page, state, snippet, score
    }
}

public enum SearchError: Error, Sendable, Equatable, CustomStringConvertible {
    case query(SearchQueryError)
    case damaged(SearchIndexError)
    case unknownCourse(String)
    case noIndex(courses: [String])
    case target(ClientError)
    case database(path: String, reason: String)

    public var description: String {
        switch self {
        case .query(let error): "\(error)"
        case .damaged(let error): "\(error)"
        case .unknownCourse(let id): "\(id): no such course in this target (give a course id or course folder that `coursepack status` lists)"
        case .noIndex(let courses): "no search index on this device for \(courses.joined(separator: ", ")): it comes with a sync of a course built by this coursepack"
        case .target(let error): "\(error)"
        case .database(let path, let reason): "\(path): \(reason)"
        }
    }
}

/// Searches the courses of a device folder: each course's installed search index (checked
/// against the file list recorded when it was installed), loaded into SQLite FTS5, ranked by
/// BM25; the results of all courses merged by score.
public struct TargetSearch: Sendable {
    public let target: ClientTarget

    public init(target: ClientTarget) {
        self.target = target
    }

    /// `course`: a course id or course folder name, to search that course only.
    public func search(_ text: String, course: String? = nil, limit: Int = 20) throws(SearchError) -> [SearchResult] {
        let state: ClientTarget.State
        do {
            state = try target.readState()
        } catch {
            throw .target(error)
        }
        var folders = state.courses.keys.sorted()
        if let course {
            folders = folders.filter { $0 == course || state.courses[$0]?.courseID == course }
            guard !folders.isEmpty else { throw .unknownCourse(course) }
        }
        var results: [(result: SearchResult, order: Int)] = []
        var queryError: SearchQueryError?
        var searched = 0
        var withoutIndex: [String] = []
        for folder in folders {
            let courseRoot = target.root + "/" + folder
            guard let (database, meta) = try Self.database(courseRoot: courseRoot) else {
                withoutIndex.append(state.courses[folder]?.courseID ?? folder)
                continue
            }
            let query: SearchQuery
            let tokenizer = SearchTokenizer(language: meta["language"] ?? "")
            do {
                query = try SearchQuery(text, tokenizer: tokenizer)
            } catch {
                queryError = queryError ?? error
                continue
            }
            searched += 1
            let found = try Self.search(query, limit: limit, in: database, courseRoot: courseRoot)
            for (document, score) in found {
                let result = Self.result(document, score: score, courseID: meta["course_id"] ?? "", courseRoot: courseRoot, query: query, tokenizer: tokenizer)
                results.append((result, results.count))
            }
        }
        if searched == 0 {
            if let queryError { throw .query(queryError) }
            if !withoutIndex.isEmpty { throw .noIndex(courses: withoutIndex) }
        }
        results.sort { $0.result.score != $1.result.score ? $0.result.score > $1.result.score : $0.order < $1.order }
        return results.prefix(limit).map(\.result)
    }

    /// A found document as a result: its page when installed, and a snippet around the terms.
    static func result(
        _ document: SearchDatabase.Document, score: Double, courseID: String, courseRoot: String, query: SearchQuery, tokenizer: SearchTokenizer
    ) -> SearchResult {
        // Installed: its folder is there (reconciliation keeps folders and manifest agreeing).
        let page = document.page.map { courseRoot + "/" + $0 }.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
        let state = page != nil ? "installed" : (document.page == nil ? "online_only" : "not_installed")
        return SearchResult(
            courseID: courseID, usageID: document.usageID, type: document.type, title: document.title, path: document.path,
            page: page, state: state, snippet: Snippet.make(text: document.text, terms: query.terms, tokenizer: tokenizer), score: score)
    }

    /// A query that fails on a database the open check passed (damage it does not see, or
    /// damage since) builds the database again from the installed index and asks once more.
    static func search(
        _ query: SearchQuery, limit: Int, in database: SearchDatabase, courseRoot: String
    ) throws(SearchError) -> [(document: SearchDatabase.Document, score: Double)] {
        let path = databasePath(courseRoot: courseRoot)
        do {
            return try database.search(query, limit: limit)
        } catch {
            try? database.queue.close()
            unlink(path)
        }
        guard let (rebuilt, _) = try Self.database(courseRoot: courseRoot) else {
            throw .database(path: path, reason: "damaged, and the course has no index to build it from")
        }
        do {
            return try rebuilt.search(query, limit: limit)
        } catch {
            throw .database(path: path, reason: "\(error)")
        }
    }

    /// The installed index, read only when its files are those it was installed with.
    static func installedIndex(courseRoot: String, folder: String, archiveSHA256: String) throws(SearchError) -> SearchIndex {
        let path = courseRoot + "/" + folder + "/" + SearchIndex.fileName
        let stateFolder = courseRoot + "/" + ClientTarget.stateFolderName
        if let damage = BlockInventory.damage(courseRoot: courseRoot, stateFolder: stateFolder, blockFolder: folder, archiveSHA256: archiveSHA256) {
            throw .damaged(.damaged(path: path, reason: damage))
        }
        do {
            return try SearchIndex.read(folder: courseRoot + "/" + folder)
        } catch {
            throw .damaged(error)
        }
    }

    static func databasePath(courseRoot: String) -> String {
        courseRoot + "/" + ClientTarget.stateFolderName + "/search.sqlite"
    }

    /// The course's search database and what it records; nil when the course has no search
    /// index (a publish from before it existed). A query reads two stamps and the database: the
    /// local manifest (several megabytes in a large course) is read only when it changed since
    /// the database last checked it, and the index only when the database must be built again
    /// (another index, or its file written since), after checking its files against the list
    /// recorded when it was installed.
    static func database(courseRoot: String) throws(SearchError) -> (SearchDatabase, [String: String])? {
        let manifestPath = courseRoot + "/manifest.json"
        let databasePath = databasePath(courseRoot: courseRoot)
        let manifestStamp = stamp(of: manifestPath) ?? "-"
        let existing = SearchDatabase.existing(at: databasePath)
        let meta = (try? existing?.meta()) ?? [:]
        if let existing, meta["manifest_stamp"] == manifestStamp, let indexPath = meta["index_path"],
            meta["index_stamp"] == stamp(of: courseRoot + "/" + indexPath)
        {
            return (existing, meta)
        }
        guard let manifest = try? ManifestFile.readWithoutBlocks(manifestPath), let archive = manifest.search,
            let indexFolder = ArchivePath.installFolder(of: archive.archive)
        else { return nil }
        let indexPath = indexFolder + "/" + SearchIndex.fileName
        guard let indexStamp = stamp(of: courseRoot + "/" + indexPath) else {
            throw .damaged(.damaged(path: courseRoot + "/" + indexPath, reason: "it is missing"))
        }
        do {
            if let existing, meta["content_hash"] == archive.contentHash, meta["index_stamp"] == indexStamp {
                try existing.record("manifest_stamp", manifestStamp)
                return (existing, try existing.meta())
            }
            let index = try installedIndex(courseRoot: courseRoot, folder: indexFolder, archiveSHA256: archive.sha256)
            let values = [
                "content_hash": archive.contentHash, "index_path": indexPath, "index_stamp": indexStamp,
                "manifest_stamp": manifestStamp, "course_id": manifest.courseID,
            ]
            let built = try SearchDatabase.build(at: databasePath, from: index, meta: values)
            return (built, try built.meta())
        } catch let error as SearchError {
            throw error
        } catch {
            throw .database(path: databasePath, reason: "\(error)")
        }
    }

    /// Size, inode, modification and change times: any write to the file changes the change
    /// time, which no tool can set back.
    static func stamp(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_size):\(info.st_ino):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)"
    }
}

extension SearchError: Diagnosable {
    public var diagnosticID: DiagnosticID {
        switch self {
        case .query: return .invalidSearch
        case .damaged: return .searchIndexDamaged
        case .unknownCourse: return .unknownBlock
        case .noIndex: return .noSearchIndex
        case .target(let error): return error.diagnosticID
        case .database: return .deviceFileError
        }
    }
}
