import FileSystem
import Foundation

/// A course export ready to read: the folder itself, or a `.tar.gz` unpacked (safely) into a
/// private temporary folder that `close()` removes.
public struct OpenedExport: Sendable {
    public let directory: ExportDirectory
    public let temporaryFolder: String?

    public static func open(_ path: String) throws(CourseError) -> OpenedExport {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            return OpenedExport(directory: try locateCourse(in: path, shownAs: path), temporaryFolder: nil)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .notACourse(path: path, reason: "neither a folder nor a .tar.gz file")
        }
        var template = Array((NSTemporaryDirectory() + "/coursepack-export-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw .unreadable(path: NSTemporaryDirectory(), reason: "cannot create a temporary folder: \(String(cString: strerror(errno)))")
        }
        let folder = String(cString: made)
        do {
            try TarGzExtractor(archive: path).extract(into: folder)
            return OpenedExport(directory: try locateCourse(in: folder, shownAs: path), temporaryFolder: folder)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// The same export, its folder answering file stamps from `stamps` (`ExportDirectory.stamped`);
    /// an unpacked tarball as it is, since no walk of the course saw its files.
    public func stamped(by stamps: PlainFileStamps) -> OpenedExport {
        guard temporaryFolder == nil else { return self }
        return OpenedExport(directory: directory.stamped(by: stamps), temporaryFolder: nil)
    }

    public func close() {
        if let temporaryFolder { try? FileManager.default.removeItem(atPath: temporaryFolder) }
    }

    /// The folder holding `course.xml`: the given one, or the single folder inside it that has one
    /// (Studio's tarballs wrap the export in `course/`).
    private static func locateCourse(in folder: String, shownAs shown: String) throws(CourseError) -> ExportDirectory {
        let manager = FileManager.default
        if manager.fileExists(atPath: folder + "/course.xml") { return try ExportDirectory(root: folder) }
        let candidates = ((try? manager.contentsOfDirectory(atPath: folder)) ?? []).sorted().filter {
            manager.fileExists(atPath: folder + "/" + $0 + "/course.xml")
        }
        switch candidates.count {
        case 1: return try ExportDirectory(root: folder + "/" + candidates[0])
        case 0: throw .notACourse(path: shown, reason: "no course.xml in it or in a folder directly inside it")
        default: throw .notACourse(path: shown, reason: "several course exports inside: \(candidates.joined(separator: ", "))")
        }
    }
}
