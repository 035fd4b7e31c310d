import Foundation
import Manifest
import SyncClient

/// What a target takes on disk, by part, as `du -sb` counts it: every file's and folder's
/// apparent size, a file with several links once. The parts add up to the whole target.
public struct DiskUsage: Sendable, Equatable {
    /// Block folders: their folders and the files only one block holds.
    public var blocks: UInt64 = 0
    /// Course file contents several folders hold (one copy each), and the store's folders and
    /// any content no folder links (until the next sync collects it).
    public var sharedFiles: UInt64 = 0
    public var runtime: UInt64 = 0
    public var search: UInt64 = 0
    /// Outline pages (`index.html`) and `_navigation/` frame pages.
    public var outlinePages: UInt64 = 0
    /// Local manifests, sync state (server manifest copies, inventories, target.json, outbox…).
    public var state: UInt64 = 0

    public var total: UInt64 { blocks + sharedFiles + runtime + search + outlinePages + state }

    /// Bytes a directory takes as `du -sb` counts it, before it is made.
    static let folderBytes: UInt64 = 4096
}

/// Counts each inode once while walking.
struct UsageWalk {
    private var seen = Set<[UInt64]>()
    var usage = DiskUsage()

    enum Part { case blocks, sharedFiles, runtime, search, outlinePages, state }

    mutating func add(_ part: Part, bytes: UInt64) {
        switch part {
        case .blocks: usage.blocks += bytes
        case .sharedFiles: usage.sharedFiles += bytes
        case .runtime: usage.runtime += bytes
        case .search: usage.search += bytes
        case .outlinePages: usage.outlinePages += bytes
        case .state: usage.state += bytes
        }
    }

    /// Adds `path` and everything under it to `part`; a block file linked from elsewhere too
    /// (more than the store and its folder) counts as a shared file.
    mutating func walk(_ path: String, as part: Part) {
        var info = stat()
        guard lstat(path, &info) == 0, seen.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else { return }
        let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
        let shared = !isFolder && part == .blocks && info.st_nlink > 2
        add(shared ? .sharedFiles : part, bytes: UInt64(max(0, info.st_size)))
        guard isFolder else { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] { walk(path + "/" + name, as: part) }
    }
}

extension ClientTarget {
    /// The target's disk use by part (see `DiskUsage`); reads only.
    public func diskUsage() -> DiskUsage {
        var walk = UsageWalk()
        walk.walkTarget(root)
        return walk.usage
    }
}

extension UsageWalk {
    /// The target's folder: course folders by part, then its state (the store last, so a
    /// content counts where a folder holds it).
    mutating func walkTarget(_ root: String) {
        var info = stat()
        guard lstat(root, &info) == 0 else { return }
        add(.state, bytes: UInt64(max(0, info.st_size)))
        seen.insert([UInt64(info.st_dev), UInt64(info.st_ino)])
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let isCourse = names.contains("manifest.json")
        if isCourse { walkCourse(root, names: names) }
        for name in names where !isCourse {
            let path = root + "/" + name
            switch name {
            case ClientTarget.stateFolderName: continue
            case "index.html": walk(path, as: .outlinePages)
            default:
                var child = stat()
                if lstat(path, &child) == 0, (child.st_mode & S_IFMT) == S_IFDIR { walkCourseFolder(path) } else { walk(path, as: .state) }
            }
        }
        walkState(root + "/" + ClientTarget.stateFolderName)
    }

    private mutating func walkCourseFolder(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0, seen.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else { return }
        add(.state, bytes: UInt64(max(0, info.st_size)))
        walkCourse(path, names: (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
        walkState(path + "/" + ClientTarget.stateFolderName)
    }

    /// A course folder's content (its state folder is walked after).
    private mutating func walkCourse(_ path: String, names: [String]) {
        for name in names {
            let child = path + "/" + name
            switch name {
            case ClientTarget.stateFolderName: continue
            case "manifest.json": walk(child, as: .state)
            case "index.html", ClientTarget.navigationFolderName: walk(child, as: .outlinePages)
            case SharedArchive.Kind.runtime.folder: walk(child, as: .runtime)
            case SharedArchive.Kind.search.folder: walk(child, as: .search)
            default: walk(child, as: .blocks)
            }
        }
    }

    private mutating func walkState(_ state: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: state)) ?? [] where name == "store" {
            walk(state + "/" + name, as: .sharedFiles)
        }
        walk(state, as: .state)
    }
}
