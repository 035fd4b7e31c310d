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
            guard let manifest = try? ManifestFile.read(courseRoot + "/manifest.json") else { continue }
            guard let archive = manifest.search, let indexFolder = SyncClient.installFolder(ofArchive: archive.archive) else {
                withoutIndex.append(manifest.courseID)
                continue
            }
            let index = try Self.installedIndex(courseRoot: courseRoot, folder: indexFolder)
            let query: SearchQuery
            do {
                query = try SearchQuery(text, tokenizer: index.tokenizer)
            } catch {
                queryError = queryError ?? error
                continue
            }
            searched += 1
            let databasePath = courseRoot + "/" + ClientTarget.stateFolderName + "/search-\(archive.contentHash.prefix(16)).sqlite"
            let found: [(document: Int, score: Double)]
            do {
                let database = try SearchDatabase.open(at: databasePath, for: index, contentHash: archive.contentHash)
                Self.removeOtherDatabases(in: courseRoot + "/" + ClientTarget.stateFolderName, keeping: databasePath)
                found = try database.search(query, limit: limit)
            } catch {
                throw .database(path: databasePath, reason: "\(error)")
            }
            let installed = Self.installedPages(manifest: manifest, courseRoot: courseRoot)
            let tokenizer = index.tokenizer
            for (document, score) in found where index.documents.indices.contains(document) {
                let entry = index.documents[document]
                let page = entry.page.flatMap { installed.contains(entry.usageID) ? courseRoot + "/" + $0 : nil }
                let state = page != nil ? "installed" : (entry.page == nil ? "online_only" : "not_installed")
                results.append((
                    SearchResult(
                        courseID: index.courseID, usageID: entry.usageID, type: entry.type, title: entry.title, path: entry.path, page: page,
                        state: state, snippet: Snippet.make(text: entry.text, terms: query.terms, tokenizer: tokenizer), score: score),
                    results.count))
            }
        }
        if searched == 0 {
            if let queryError { throw .query(queryError) }
            if !withoutIndex.isEmpty { throw .noIndex(courses: withoutIndex) }
        }
        results.sort { $0.result.score != $1.result.score ? $0.result.score > $1.result.score : $0.order < $1.order }
        return results.prefix(limit).map(\.result)
    }

    /// The installed index, read only when its files are those it was installed with.
    static func installedIndex(courseRoot: String, folder: String) throws(SearchError) -> SearchIndex {
        let path = courseRoot + "/" + folder + "/" + SearchIndex.fileName
        let stateFolder = courseRoot + "/" + ClientTarget.stateFolderName
        if let inventory = BlockInventory.read(BlockInventory.path(stateFolder: stateFolder, blockFolder: folder)),
            let damage = inventory.damage(in: courseRoot + "/" + folder)
        {
            throw .damaged(.damaged(path: path, reason: damage))
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .damaged(.damaged(path: path, reason: "it cannot be read"))
        }
        do {
            return try SearchIndex.decode(Array(data), path: path)
        } catch {
            throw .damaged(error)
        }
    }

    /// Usage ids whose page is installed in the course folder.
    static func installedPages(manifest: CourseManifest, courseRoot: String) -> Set<String> {
        Set(manifest.blocks.filter { block in
            guard block.isOffline, let archive = block.archive, let folder = SyncClient.installFolder(ofArchive: archive) else { return false }
            return FileManager.default.fileExists(atPath: courseRoot + "/" + folder + "/index.html")
        }.map(\.usageID))
    }

    /// Databases of earlier indexes of the course.
    static func removeOtherDatabases(in stateFolder: String, keeping path: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: stateFolder)) ?? []
        where name.hasPrefix("search-") && name.hasSuffix(".sqlite") && stateFolder + "/" + name != path {
            unlink(stateFolder + "/" + name)
        }
    }
}
