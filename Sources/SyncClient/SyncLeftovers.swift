import Foundation
import ZipArchive

/// What a sync killed mid-way leaves in a course folder, found and removed by the next sync
/// once it holds the folder's lock: staging folders (`<type>/.<name>.new-<pid>-<n>`), folders
/// moved aside (`<type>/.<name>.old-<pid>`), temporary files of a durable write
/// (`.manifest.json.tmp-<pid>`, in the folder or its state folder) and anything in `downloads/`
/// that is not a regular file. Partial downloads that are regular
/// files stay: the sync resumes them, and removes at its end those no failed block needs.
///
/// Only a sync holding the lock writes these, so while this process holds it, one not of this
/// process is a dead sync's, even when its pid now belongs to a live, unrelated process.
public struct SyncLeftovers: Sendable {
    public let target: String
    let stateFolder: String

    public init(target: String) {
        self.target = target
        stateFolder = SyncClient.stateFolder(of: target)
    }

    /// `.<name>.new-<pid>-<n>` or `.<name>.old-<pid>` → the pid; nil for any other name.
    public static func stagingPID(_ name: String) -> Int32? {
        guard name.hasPrefix(".") else { return nil }
        for marker in [".new-", ".old-"] {
            guard let range = name.range(of: marker, options: .backwards), range.lowerBound > name.index(after: name.startIndex) else { continue }
            let digits = name[range.upperBound...].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard let pidText = digits.first, let pid = Int32(pidText), pid > 0,
                digits.count == 1 || digits[1].allSatisfy(\.isNumber)
            else { continue }
            return pid
        }
        return nil
    }

    /// `<name>.tmp-<pid>` → the pid; nil for any other name.
    public static func temporaryPID(_ name: String) -> Int32? {
        guard let range = name.range(of: ".tmp-", options: .backwards), let pid = Int32(name[range.upperBound...]), pid > 0 else { return nil }
        return pid
    }

    /// The leftovers of other processes, relative to the target; nothing is changed.
    public func find() -> [String] {
        let fm = FileManager.default
        let me = getpid()
        var found: [String] = []
        for type in ((try? fm.contentsOfDirectory(atPath: target)) ?? []).sorted() where !type.hasPrefix(".") {
            var info = stat()
            // A type folder that is a link is never entered (lstat): nothing outside is touched.
            guard lstat(target + "/" + type, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { continue }
            for name in ((try? fm.contentsOfDirectory(atPath: target + "/" + type)) ?? []).sorted() {
                guard let pid = Self.stagingPID(name), pid != me else { continue }
                found.append(type + "/" + name)
            }
        }
        for (folder, shown) in [(target, ""), (stateFolder, ".coursepack-sync/")] {
            for name in ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).sorted() {
                guard let pid = Self.temporaryPID(name), pid != me else { continue }
                found.append(shown + name)
            }
        }
        let downloads = stateFolder + "/downloads"
        for name in ((try? fm.contentsOfDirectory(atPath: downloads)) ?? []).sorted() {
            var info = stat()
            guard lstat(downloads + "/" + name, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG else { continue }
            found.append(".coursepack-sync/downloads/" + name)
        }
        return found
    }

    /// Removes the leftovers of other processes; returns what was removed. Call it only while
    /// holding the folder's sync lock.
    func removeAll() -> [String] {
        let found = find()
        for path in found { ZipReader.removeTree(target + "/" + path) }
        return found
    }
}
