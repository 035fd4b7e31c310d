import ClientTarget
import FileSystem
import Foundation
import Manifest
import SyncClient
import Testing
import TestSupport

/// A sync with nothing to do stops at `SettledSync`: it trusts the course folder only while
/// every installed entry has the stamp it was settled with. Each change a user, a cleaner app
/// or a killed tool can make to the folder must make the next sync a real one, which repairs
/// it, and the sync after that is a no-op again. From the demo course built by the real builder.
@Suite(.serialized) struct SettledSyncTests {
    struct Target {
        let source: String
        let root: String
        var course = ""

        func sync() async throws -> ClientTarget.SyncReport {
            try await ClientTarget(root: root).sync(.init(source: SyncSource(source)))
        }
    }

    static func settledTarget(_ name: String) async throws -> Target {
        let folder = TestSupport.temporaryFolder(name)
        let published = try SplitManifestSyncTests.build(into: folder)
        var target = Target(source: published, root: folder + "/device")
        let first = try await target.sync()
        #expect(first.summary?.failures.isEmpty == true && first.summary?.settledBlocks == nil)
        target.course = target.root + "/" + first.courseFolder
        let second = try await target.sync()
        #expect(second.summary?.settledBlocks != nil, "a second sync with nothing changed is settled")
        return target
    }

    /// A file of an installed html block that sits in a subfolder (`static/…`).
    static func staticFile(in course: String) throws -> String {
        let html = course + "/html"
        for block in try FileManager.default.contentsOfDirectory(atPath: html).sorted() {
            let statics = html + "/" + block + "/static"
            if let name = (try? FileManager.default.contentsOfDirectory(atPath: statics))?.sorted().first {
                var info = stat()
                if lstat(statics + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 { return statics + "/" + name }
            }
        }
        throw CancellationError()
    }

    /// Each change, then: the sync is not settled and repairs the folder; the next one is.
    @Test func everyChangeToAnInstalledFolderMakesTheNextSyncARealOneThatRepairsIt() async throws {
        let target = try await Self.settledTarget("settled-changes")
        let page = try #require(try FileManager.default.contentsOfDirectory(atPath: target.course + "/html").sorted().first)
        let index = target.course + "/html/" + page + "/index.html"
        let asset = try Self.staticFile(in: target.course)
        let indexBytes = try #require(FileManager.default.contents(atPath: index))
        let assetBytes = try #require(FileManager.default.contents(atPath: asset))

        let changes: [(String, () throws -> Void, () -> Bool)] = [
            ("a page written in place at the same size", {
                let handle = try #require(FileHandle(forWritingAtPath: index))
                try handle.write(contentsOf: Data(repeating: UInt8(ascii: "x"), count: 8))
                try handle.close()
            }, { FileManager.default.contents(atPath: index) == indexBytes }),
            ("a static file deleted", { try FileManager.default.removeItem(atPath: asset) },
             { FileManager.default.contents(atPath: asset) == assetBytes }),
            ("a static file replaced by a copy of itself (another inode)", {
                try FileManager.default.removeItem(atPath: asset)
                try assetBytes.write(to: URL(fileURLWithPath: asset))
            }, { FileManager.default.contents(atPath: asset) == assetBytes }),
            ("a file added to a block folder", {
                try Data("stray".utf8).write(to: URL(fileURLWithPath: target.course + "/html/" + page + "/added.txt"))
            }, { !FileManager.default.fileExists(atPath: target.course + "/html/" + page + "/added.txt") }),
            ("a stray folder in a type folder", {
                try FileManager.default.createDirectory(atPath: target.course + "/html/not-a-block", withIntermediateDirectories: false)
            }, { !FileManager.default.fileExists(atPath: target.course + "/html/not-a-block") }),
            ("a stray file at the top of the course folder", {
                try Data("stray".utf8).write(to: URL(fileURLWithPath: target.course + "/notes.txt"))
            }, { !FileManager.default.fileExists(atPath: target.course + "/notes.txt") }),
            ("a block folder removed", { try FileManager.default.removeItem(atPath: target.course + "/html/" + page) },
             { FileManager.default.contents(atPath: index) == indexBytes }),
            ("a static folder replaced by a link to a folder holding the same files", {
                let statics = DurableFile.folder(of: asset)
                let elsewhere = target.root + "-elsewhere"
                try FileManager.default.moveItem(atPath: statics, toPath: elsewhere)
                try FileManager.default.createSymbolicLink(atPath: statics, withDestinationPath: elsewhere)
            }, {
                var info = stat()
                return lstat(DurableFile.folder(of: asset), &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
                    && FileManager.default.contents(atPath: asset) == assetBytes
            }),
        ]
        for (change, make, repaired) in changes {
            try make()
            let report = try await target.sync()
            #expect(report.summary?.settledBlocks == nil, "\(change): the sync took the folder for unchanged")
            #expect(report.summary?.failures.isEmpty == true, "\(change)")
            #expect(repaired(), "\(change): not repaired (\(report.repairs))")
            let again = try await target.sync()
            #expect(again.summary?.settledBlocks != nil, "\(change): the sync after the repair is not a no-op")
        }
    }

    /// A sync of a changed publish trusts the course folder without reading every inventory
    /// only while it is still as the last sync settled it: damage made alongside the server's
    /// change is repaired in the same sync.
    @Test func aServerChangeWithLocalDamageIsRepairedInOneSync() async throws {
        let target = try await Self.settledTarget("settled-server-change")
        let folder = DurableFile.folder(of: target.source)
        let page = try #require(try FileManager.default.contentsOfDirectory(atPath: target.course + "/html").sorted().first)
        let index = target.course + "/html/" + page + "/index.html"
        let indexBytes = try #require(FileManager.default.contents(atPath: index))
        try Self.editOnePage(of: folder + "/course", turn: 1)
        _ = try SplitManifestSyncTests.build(into: folder)

        let changed = try await target.sync()
        #expect(changed.summary?.settledBlocks == nil && changed.summary?.downloadedBlocks ?? 0 > 0, "the edit is fetched")
        #expect(changed.repairs.isEmpty, "nothing was damaged: \(changed.repairs)")

        try Self.editOnePage(of: folder + "/course", turn: 2)
        _ = try SplitManifestSyncTests.build(into: folder)
        let handle = try #require(FileHandle(forWritingAtPath: index))
        try handle.write(contentsOf: Data(repeating: UInt8(ascii: "x"), count: 8))
        try handle.close()
        let both = try await target.sync()
        #expect(both.summary?.failures.isEmpty == true)
        #expect(FileManager.default.contents(atPath: index) == indexBytes, "the damaged page is repaired (\(both.repairs))")
        #expect(try await target.sync().summary?.settledBlocks != nil, "and the sync after it is a no-op")
    }

    /// Adds a paragraph to one html file of the course in `folder` (the last one by name).
    static func editOnePage(of course: String, turn: Int) throws {
        let html = course + "/html"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: html).filter { $0.hasSuffix(".html") }.sorted().last)
        let handle = try #require(FileHandle(forWritingAtPath: html + "/" + name))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n<p>Edited \(turn).</p>\n".utf8))
        try handle.close()
    }

    /// The frame pages (`_navigation/<n>.html`) are written only where they differ: a sync
    /// after one page's edit keeps every other frame's file (same inode), replaces a frame that
    /// was changed or swapped for a link or a folder, and removes what is not a frame.
    @Test func framePagesAreRewrittenOnlyWhereTheyDiffer() async throws {
        let target = try await Self.settledTarget("settled-frames")
        let navigation = target.course + "/" + ClientTarget.navigationFolderName
        func inodes() throws -> [String: ino_t] {
            var found: [String: ino_t] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: navigation) {
                var info = stat()
                if lstat(navigation + "/" + name, &info) == 0 { found[name] = info.st_ino }
            }
            return found
        }
        let before = try inodes()
        #expect(before.count > 10)
        let frames = before.keys.sorted { Int($0.dropLast(5)) ?? 0 < Int($1.dropLast(5)) ?? 0 }
        let (written, linked) = (frames[1], frames[2])
        let writtenBytes = try #require(FileManager.default.contents(atPath: navigation + "/" + written))
        let linkedBytes = try #require(FileManager.default.contents(atPath: navigation + "/" + linked))
        try Data("changed".utf8).write(to: URL(fileURLWithPath: navigation + "/" + written))
        try linkedBytes.write(to: URL(fileURLWithPath: target.root + "-frame-copy"))
        unlink(navigation + "/" + linked)
        try FileManager.default.createSymbolicLink(atPath: navigation + "/" + linked, withDestinationPath: target.root + "-frame-copy")
        try Data("stray".utf8).write(to: URL(fileURLWithPath: navigation + "/stray.html"))
        let last = try #require(frames.last)
        unlink(navigation + "/" + last)
        try FileManager.default.createDirectory(atPath: navigation + "/" + last + "/inside", withIntermediateDirectories: true)
        let folder = DurableFile.folder(of: target.source)
        try Self.editOnePage(of: folder + "/course", turn: 1)
        _ = try SplitManifestSyncTests.build(into: folder)

        let report = try await target.sync()
        #expect(report.summary?.failures.isEmpty == true && report.summary?.settledBlocks == nil)
        let after = try inodes()
        #expect(Set(after.keys) == Set(before.keys), "the stray is removed, every frame is there")
        #expect(FileManager.default.contents(atPath: navigation + "/" + written) == writtenBytes)
        var info = stat()
        #expect(lstat(navigation + "/" + linked, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG, "the link is replaced by the frame")
        #expect(FileManager.default.contents(atPath: navigation + "/" + linked) == linkedBytes)
        #expect(lstat(navigation + "/" + last, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG, "a folder in a frame's place is replaced")
        let kept = before.filter { after[$0.key] == $0.value }.count
        #expect(kept >= before.count - 4, "\(before.count - kept) of \(before.count) frames written again")
    }

    /// A sync the record vouches for rewrites no page, so the record is saved only after every
    /// page the sync wrote (and, by `syncfs`, once they are on the disk): saved before them, a
    /// power cut could leave empty frames that no later sync rewrites until the course changes.
    @Test func theRecordIsSavedAfterEveryPageTheSyncWrote() async throws {
        let folder = TestSupport.temporaryFolder("settled-after-pages")
        let target = Target(source: try SplitManifestSyncTests.build(into: folder), root: folder + "/device")
        let report = try await target.sync()
        #expect(report.summary?.failures.isEmpty == true)
        let course = target.root + "/" + report.courseFolder
        func modified(_ path: String) throws -> Int64 {
            var info = stat()
            guard lstat(path, &info) == 0 else { throw FileError(path: path, operation: "lstat", errno: errno) }
            return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }
        let navigation = course + "/" + ClientTarget.navigationFolderName
        let frames = try FileManager.default.contentsOfDirectory(atPath: navigation).map { navigation + "/" + $0 }
        #expect(frames.count > 10)
        let pages = frames + [course + "/index.html", target.root + "/index.html"]
        let newestPage = try pages.map(modified).max() ?? .max
        #expect(try modified(SettledSync.path(target: course)) >= newestPage, "the record predates a page it vouches for")
        #expect(report.summary?.settledRecord == nil, "the report does not carry the record")
        let second = try await target.sync()
        #expect(second.summary?.settledBlocks != nil, "the record is there for the next sync")
    }

    /// A file that is not a link to the store (a copy: the file system refused a link, or the
    /// link limit was reached) is stamped by itself: a write to it is found too.
    @Test func aCopyInsteadOfALinkIsCheckedByItself() async throws {
        let target = try await Self.settledTarget("settled-copy")
        let asset = try Self.staticFile(in: target.course)
        let bytes = try #require(FileManager.default.contents(atPath: asset))
        try FileManager.default.removeItem(atPath: asset)
        try bytes.write(to: URL(fileURLWithPath: asset))
        // The same bytes: the folder is as installed, and is settled with the copy in it.
        #expect(try await target.sync().summary?.settledBlocks == nil)
        #expect(try await target.sync().summary?.settledBlocks != nil)
        let record = String(decoding: try #require(FileManager.default.contents(atPath: SettledSync.path(target: target.course))), as: UTF8.self)
        let relative = String(asset.dropFirst(target.course.count + 1))
        #expect(record.split(separator: "\n").contains { $0 == "c\t" + relative }, "the copy is recorded as one")

        let handle = try #require(FileHandle(forWritingAtPath: asset))
        try handle.write(contentsOf: Data([bytes[0] ^ 0xFF]))
        try handle.close()
        let report = try await target.sync()
        #expect(report.summary?.settledBlocks == nil, "a write to the copy went unnoticed")
        #expect(FileManager.default.contents(atPath: asset) == bytes, "\(report.repairs)")
    }

    @Test func aRecordOfTheEarlierFormatIsNotTrustedAndIsWrittenAnew() async throws {
        let target = try await Self.settledTarget("settled-format")
        let path = SettledSync.path(target: target.course)
        let current = try #require(FileManager.default.contents(atPath: path))
        let currentText = String(decoding: current, as: UTF8.self)
        let fields = try #require(currentText.split(separator: "\n").first).split(separator: "\t")
        // Format 2: the header, fingerprint, manifest stamp and count, then a line per folder.
        let older = "coursepack-settled 2\t\(fields[1])\t\(fields[2])\t\(fields[3])\n"
        try Data(older.utf8).write(to: URL(fileURLWithPath: path))
        let report = try await target.sync()
        #expect(report.summary?.settledBlocks == nil)
        // The local manifest is written again (its stamp changes); the folders are not.
        let rewrittenText = String(decoding: try #require(FileManager.default.contents(atPath: path)), as: UTF8.self)
        let rewritten = try #require(rewrittenText.split(separator: "\n").first).split(separator: "\t")
        #expect(rewritten.count == 5 && rewritten[0] == "coursepack-settled 3")
        #expect(rewritten.count == 5 && [0, 1, 3, 4].map { rewritten[$0] } == [0, 1, 3, 4].map { fields[$0] }, "the same course and folders recorded again")
        #expect(rewrittenText.split(separator: "\n").dropFirst() == currentText.split(separator: "\n").dropFirst())
        #expect(try await target.sync().summary?.settledBlocks != nil)

        // A record naming a path out of the course folder is no record of it.
        for outside in ["c\t../../escaped", "d\t/etc", "c\thtml/./x", "d\thtml//x", "s\tnot-a-key"] {
            try Data((rewrittenText + outside + "\n").utf8).write(to: URL(fileURLWithPath: path))
            #expect(SettledSync.read(target: target.course) == nil, "\(outside)")
        }
        try Data((rewrittenText + "c\thtml/...\n").utf8).write(to: URL(fileURLWithPath: path))
        #expect(SettledSync.read(target: target.course) != nil, "a name of three dots is a name")

        // A FIFO in its place is not read (it would hang every sync): a real sync replaces it.
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        #expect(try await target.sync().summary?.settledBlocks == nil)
        #expect(try await target.sync().summary?.settledBlocks != nil)
    }
}
