import ClientTarget
import Foundation
import FileSystem
import Manifest
import SyncClient
import Testing
import TestSupport

/// Issue 31 on the device: each course file content downloaded once, kept once in the target's
/// store and hard-linked into every folder that lists it, against a real nginx on loopback and
/// manifests rewritten into the content-addressed form by an independent Python script.
@Suite(.serialized) struct ContentStoreSyncTests {
    struct Published: Decodable {
        var floor: UInt64
        var manifest: UInt64
        var sharedKey: String?
        var sharedCompressed: UInt64
        var sharedUsers: Int

        enum CodingKeys: String, CodingKey {
            case floor, manifest
            case sharedKey = "shared_key"
            case sharedCompressed = "shared_compressed"
            case sharedUsers = "shared_users"
        }
    }

    static let script = TestSupport.packageRoot + "/Tests/fixtures/content_addressed.py"

    /// A published build of `course`, in the form today's builder writes.
    static func build(_ course: String, into folder: String) throws -> String {
        let published = folder + "/published"
        let built = try TestSupport.coursepack(["build", course, "--out", published, "-q"])
        #expect(built.status == 0, "\(built.stderr)")
        return published
    }

    /// Rewrites `published` into the content-addressed form (`hostile`: see the script).
    static func contentAddress(_ published: String, hostile: String? = nil) throws -> Published {
        let python = TestSupport.which("python3") ?? "/usr/bin/python3"
        let mode = hostile.map { $0.hasPrefix("--") ? [$0] : ["--hostile", $0] } ?? []
        let result = try TestSupport.run(python, [script, published] + mode)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(Published.self, from: Data(result.stdout.utf8))
    }

    static func nginx(_ root: String) throws -> NginxServer {
        guard let server = try NginxServer(serving: root) else {
            Issue.record("nginx is not installed: the store's sync tests need it (apt-get install nginx)")
            throw CancellationError()
        }
        return server
    }

    /// Bytes nginx sent, over requests whose path passes `counted`.
    static func bytesSent(_ server: NginxServer, counted: (String) -> Bool = { _ in true }) -> UInt64 {
        server.requests().reduce(0) { total, line in
            let fields = line.split(separator: " ")
            guard fields.count >= 4, counted(String(fields[1])), let bytes = UInt64(fields[3]) else { return total }
            return total + bytes
        }
    }

    static func inode(_ path: String) -> (ino: UInt64, links: UInt64)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_ino), UInt64(info.st_nlink))
    }

    /// Every listed file of every installed block and shared folder of the course: the same
    /// inode as the store's copy of its content. Returns how many were checked.
    static func linkedFiles(courseRoot: String, store: ContentStore) throws -> Int {
        let manifest = try #require(try ManifestFile.read(courseRoot + "/manifest.json"))
        var checked = 0
        var folders: [(String, FileListing)] = manifest.blocks.compactMap { block in
            guard let archive = block.archive, block.isOffline, let files = block.files else { return nil }
            return (String(archive.dropLast(4)), files)
        }
        folders += manifest.sharedArchives.compactMap { shared in shared.files.map { (String(shared.archive.dropLast(4)), $0) } }
        for (folder, files) in folders {
            for (path, key) in files {
                let installed = inode(courseRoot + "/" + folder + "/" + path)
                let stored = inode(store.path(of: key))
                #expect(installed != nil && installed?.ino == stored?.ino, "\(folder)/\(path) is not linked to the store's \(key)")
                checked += 1
            }
        }
        return checked
    }

    static func sync(_ source: String, into target: String) async throws -> ClientTarget.SyncReport {
        try await ClientTarget(root: target).sync(.init(source: SyncSource(source)))
    }

    @Test func aFullSyncSendsEachContentOnceAndAnEditToTheMostSharedFileResendsLittle() async throws {
        let folder = TestSupport.temporaryFolder("store-bytes")
        let published = try Self.build(TestSupport.demoCourse, into: folder)
        let floor = try Self.contentAddress(published)
        let server = try Self.nginx(published)
        defer { server.stop() }
        let target = folder + "/device"
        let report = try await Self.sync(server.baseURL, into: target)
        #expect(report.summary?.failures.isEmpty == true, "\(report.summary?.failures.map { "\($0.error)" } ?? [])")
        let sent = Self.bytesSent(server)
        let limit = Double(floor.floor + floor.manifest) * 1.10
        #expect(Double(sent) <= limit, "a full sync sent \(sent) bytes; the floor is \(floor.floor) + manifest \(floor.manifest)")
        print("full sync: \(sent) bytes sent, floor \(floor.floor) + manifest \(floor.manifest): \(Double(sent) / Double(floor.floor + floor.manifest))x")
        #expect(!server.requests().contains { $0.contains(".zip ") }, "no block archive is downloaded when the manifest lists contents")
        let courseRoot = target + "/" + report.courseFolder
        #expect(try Self.linkedFiles(courseRoot: courseRoot, store: ClientTarget(root: target).contentStore) > 100)
        let shared = try #require(floor.sharedKey)
        #expect(floor.sharedUsers > 100, "the demo course's style sheet is in most blocks")
        #expect((Self.inode(ClientTarget(root: target).contentStore.path(of: shared))?.links ?? 0) > UInt64(floor.sharedUsers))

        let edited = try Self.contentAddress(published, hostile: "edit-shared")
        server.clearLog()
        let resync = try await Self.sync(server.baseURL, into: target)
        #expect(resync.summary?.failures.isEmpty == true)
        #expect((resync.summary?.downloadedBlocks ?? 0) >= floor.sharedUsers, "every block that lists the file is updated")
        let resent = Self.bytesSent(server) { !$0.hasSuffix("/manifest.json") }
        print("resync after editing a file \(floor.sharedUsers) blocks list: \(resent) bytes besides the manifest, the file is \(edited.sharedCompressed) compressed")
        #expect(resent <= 3 * edited.sharedCompressed + 20_000, "the resync sent \(resent) bytes for one edited file of \(edited.sharedCompressed)")
        #expect(try Self.linkedFiles(courseRoot: courseRoot, store: ClientTarget(root: target).contentStore) > 100)
        let stored = ClientTarget(root: target).contentStore.contents()
        #expect(stored[shared] == nil, "the old version of the edited file is gone with the last block that listed it")
        let problems = try TestSupport.run(TestSupport.which("python3") ?? "/usr/bin/python3", ["-c", Self.brokenLinks, courseRoot])
        #expect(problems.stdout.hasPrefix("[]"), "pages' links resolve in their own folders: \(problems.stdout)")
    }

    /// Every page's relative links to its own static folder resolve.
    static let brokenLinks = """
        import json, os, re, sys
        from urllib.parse import unquote
        root = sys.argv[1]
        m = json.load(open(os.path.join(root, "manifest.json")))
        bad = []
        for b in m["blocks"]:
            if not b.get("files"): continue
            folder = os.path.join(root, b["archive"][:-4])
            page = open(os.path.join(folder, "index.html"), encoding="utf-8", errors="replace").read()
            for link in re.findall(r'(?:src|href)="(static/[^"#?]+)', page):
                if not os.path.isfile(os.path.join(folder, unquote(link))): bad.append(folder + ": " + link)
        print(json.dumps(bad))
        """

    @Test func twoCoursesSharingAFileKeepOneCopyAndAFormerDeviceMovesToTheStoreWithoutDownloading() async throws {
        let folder = TestSupport.temporaryFolder("store-share")
        let published = try Self.build(TestSupport.exampleCourse, into: folder)
        _ = try Self.contentAddress(published, hostile: "--strip")
        let server = try Self.nginx(folder)
        defer { server.stop() }
        let target = folder + "/device"
        // Today's format first: block archives, no store.
        let old = try await Self.sync(server.baseURL + "/published", into: target)
        #expect(old.summary?.failures.isEmpty == true && (old.summary?.downloadedBlocks ?? 0) > 3)
        _ = try Self.contentAddress(published)
        server.clearLog()
        let upgraded = try await Self.sync(server.baseURL + "/published", into: target)
        #expect(upgraded.summary?.failures.isEmpty == true, "\(upgraded.summary?.failures.map { "\($0.error)" } ?? [])")
        #expect((upgraded.summary?.adoptedContents ?? 0) > 3)
        #expect(upgraded.summary?.downloadedContents == 0)
        let paths = server.requests().compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
        // The split form's index is asked for first (issue 33); this publish has none.
        #expect(paths == ["/published/manifest-index.json", "/published/manifest.json"], "the upgrade downloads the manifest only: \(paths)")
        let store = ClientTarget(root: target).contentStore
        let firstRoot = target + "/" + upgraded.courseFolder
        #expect(try Self.linkedFiles(courseRoot: firstRoot, store: store) > 3)

        // The same contents under another course id, in the same target.
        let other = folder + "/other"
        try TestSupport.copy(published, to: other)
        let text = String(decoding: TestSupport.read(other + "/manifest.json"), as: UTF8.self)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        try TestSupport.write(["manifest.json": text.replacingOccurrences(of: "\"\(manifest.courseID)\"", with: "\"course-v1:Other+X+1\"")], under: other)
        let before = store.contents()
        server.clearLog()
        let second = try await Self.sync(server.baseURL + "/other", into: target)
        #expect(second.courseFolder != upgraded.courseFolder)
        #expect(second.summary?.downloadedContents == 0, "every content is in the store already")
        #expect(store.contents() == before)
        let secondRoot = target + "/" + second.courseFolder
        #expect(try Self.linkedFiles(courseRoot: secondRoot, store: store) > 3)
        let page = try #require(manifest.blocks.first { $0.files?["index.html"] != nil })
        let folderName = String(try #require(page.archive).dropLast(4))
        #expect(Self.inode(firstRoot + "/" + folderName + "/index.html")?.ino == Self.inode(secondRoot + "/" + folderName + "/index.html")?.ino)
        #expect((Self.inode(firstRoot + "/" + folderName + "/index.html")?.links ?? 0) >= 3, "one inode: the store's and each course's")
    }

    /// A stored (not gzipped) content, a video here, is its download: hashed once as it
    /// arrives, and past the size fetched into memory (4 MiB) moved into the store as written
    /// rather than copied. Installed, it is the store's file, readable, with an inventory whose
    /// CRC-32 matches its bytes; one byte changed on the server, it is refused on either path.
    @Test(arguments: [(200_000, false), (6 << 20, false), (200_000, true), (6 << 20, true)])
    func aStoredContentIsInstalledAsDownloadedAndRefusedWhenItsBytesDoNotMatch(size: Int, corrupt: Bool) async throws {
        let folder = TestSupport.temporaryFolder("store-stored")
        let course = folder + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        // An MP4's own header, so that the builder stores it, then bytes that do not compress.
        var video = Array(TestSupport.read(course + "/static/lecture.mp4").prefix(32))
        var generator = SystemRandomNumberGenerator()
        while video.count < size { video.append(UInt8.random(in: 0...255, using: &generator)) }
        try TestSupport.writeBytes(video, to: course + "/static/lecture.mp4")
        let published = try Self.build(course, into: folder)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let key = SHA256Hex.of(video)
        let file = try #require(manifest.files?[key], "the video is a listed content")
        #expect(file.encoding == nil && file.compressedSize == UInt64(size), "it is published stored: \(file)")
        if corrupt {
            let path = published + "/" + file.path(sha256: key)
            var bytes = TestSupport.read(path)
            bytes[bytes.count / 2] ^= 0x01
            try TestSupport.writeBytes(bytes, to: path)
        }
        let owner = try #require(manifest.blocks.first { $0.files?.values.contains(key) == true })
        let server = try Self.nginx(published)
        defer { server.stop() }
        let target = folder + "/device"
        let report = try await Self.sync(server.baseURL, into: target)
        let summary = try #require(report.summary)
        let store = ClientTarget(root: target).contentStore
        let courseRoot = target + "/" + report.courseFolder
        let state = courseRoot + "/.coursepack-sync"
        #expect(TestSupport.files(under: state + "/downloads").isEmpty, "no download is left behind")
        #expect(TestSupport.files(under: store.folder).allSatisfy { !$0.contains(".tmp-") })
        if corrupt {
            let failure = try #require(summary.failures.first { $0.usageID == owner.usageID }, "the block that lists the video fails")
            #expect("\(failure.error)".contains("do not match its sha256") && "\(failure.error)".contains(key), "\(failure.error)")
            #expect(!store.holds(key, size: file.size), "nothing unverified reaches the store")
            #expect(!FileManager.default.fileExists(atPath: courseRoot + "/" + String(try #require(owner.archive).dropLast(4))))
            return
        }
        #expect(summary.failures.isEmpty, "\(summary.failures.map { "\($0.error)" })")
        let stored = store.path(of: key)
        #expect(SHA256Hex.of(TestSupport.read(stored)) == key)
        var info = stat()
        #expect(stat(stored, &info) == 0 && info.st_mode & 0o777 == 0o644, "readable like every stored content")
        #expect(try Self.linkedFiles(courseRoot: courseRoot, store: store) > 0)
        let blockFolder = String(try #require(owner.archive).dropLast(4))
        let damage = BlockInventory.damage(
            courseRoot: courseRoot, stateFolder: state, blockFolder: blockFolder, archiveSHA256: owner.sha256, readingBytes: true)
        #expect(damage == nil, "the inventory's CRC-32 is the video's: \(damage ?? "")")
        // From a folder, whose downloads are private copies (0600), the same.
        let fromFolder = try await Self.sync(published, into: folder + "/from-folder")
        #expect(fromFolder.summary?.failures.isEmpty == true)
        let copied = ClientTarget(root: folder + "/from-folder").contentStore.path(of: key)
        #expect(stat(copied, &info) == 0 && info.st_mode & 0o777 == 0o644 && SHA256Hex.of(TestSupport.read(copied)) == key)
    }

    @Test(arguments: ["mismatch", "bomb"])
    func aContentThatDoesNotMatchItsKeyIsRefusedAndNothingIsInstalledFromIt(_ kind: String) async throws {
        let folder = TestSupport.temporaryFolder("store-hostile")
        let published = try Self.build(TestSupport.exampleCourse, into: folder)
        _ = try Self.contentAddress(published, hostile: kind)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let victim = try #require(manifest.blocks.first { $0.files != nil })
        let key = try #require(victim.files?.sorted { $0.key < $1.key }.first?.value)
        let server = try Self.nginx(published)
        defer { server.stop() }
        let target = folder + "/device"
        let summary = try await SyncClient(options: .init(source: SyncSource(server.baseURL), target: target)).sync()
        let failure = try #require(summary.failures.first { $0.usageID == victim.usageID }, "the block that lists the bad content fails")
        let expected = kind == "bomb" ? "gzip bomb" : "do not match its sha256"
        #expect("\(failure.error)".contains(expected) && "\(failure.error)".contains(key), "\(failure.error)")
        #expect(!FileManager.default.fileExists(atPath: target + "/" + String(try #require(victim.archive).dropLast(4))), "nothing is installed from it")
        #expect(!ContentStore(folder: ContentStore.folder(ofTarget: target)).holds(key, size: manifest.files?[key]?.size ?? 0))
        #expect(TestSupport.files(under: target + "/.coursepack-sync/store").allSatisfy { !$0.contains(".tmp-") })
        let local = try #require(try ManifestFile.read(target + "/manifest.json"))
        #expect(!local.blocks.contains { $0.usageID == victim.usageID && $0.files != nil }, "the local manifest does not name it")
    }

    @Test func aListingPathOutsideTheFolderRefusesTheManifestAndKeepsWhatIsInstalled() async throws {
        let folder = TestSupport.temporaryFolder("store-dotdot")
        let published = try Self.build(TestSupport.exampleCourse, into: folder)
        _ = try Self.contentAddress(published)
        let target = folder + "/device"
        let first = try await SyncClient(options: .init(source: .folder(published), target: target)).sync()
        #expect(first.failures.isEmpty)
        let before = Dictionary(uniqueKeysWithValues: TestSupport.files(under: target).filter { !$0.hasPrefix(".coursepack-sync/lock") }.map { ($0, TestSupport.read(target + "/" + $0)) })
        _ = try Self.contentAddress(published, hostile: "dotdot")
        do {
            _ = try await SyncClient(options: .init(source: .folder(published), target: target)).sync()
            Issue.record("a listing path with .. is refused")
        } catch {
            #expect("\(error)".contains("unsafe path") && "\(error)".contains("../escaped.html"), "\(error)")
        }
        let after = Dictionary(uniqueKeysWithValues: TestSupport.files(under: target).filter { !$0.hasPrefix(".coursepack-sync/lock") }.map { ($0, TestSupport.read(target + "/" + $0)) })
        #expect(after == before, "the installed version is kept")
        #expect(!FileManager.default.fileExists(atPath: folder + "/escaped.html") && !FileManager.default.fileExists(atPath: target + "/html/escaped.html"))
    }

    /// `du -sb`, the independent measure of what a target takes.
    static func du(_ path: String) throws -> UInt64 {
        let result = try TestSupport.run("/usr/bin/du", ["-sb", path])
        return UInt64(result.stdout.split(separator: "\t").first ?? "") ?? 0
    }

    @Test func withHalfTheCourseAsBudgetTheTargetStaysWithinItAndNothingDownloadedIsEvicted() async throws {
        let folder = TestSupport.temporaryFolder("store-budget")
        let published = try Self.build(TestSupport.demoCourse, into: folder)
        _ = try Self.contentAddress(published)
        let server = try Self.nginx(published)
        defer { server.stop() }
        let whole = folder + "/whole"
        _ = try await Self.sync(server.baseURL, into: whole)
        let full = try Self.du(whole)
        #expect(ClientTarget(root: whole).diskUsage().total == full, "the parts add up to du -sb")

        let target = folder + "/half"
        var request = ClientTarget.SyncRequest(source: SyncSource(server.baseURL))
        request.budget = full / 2
        let report = try await ClientTarget(root: target).sync(request)
        let downloaded = Set(report.summary?.plan.downloads.map(\.usageID) ?? [])
        #expect(report.evicted.isEmpty, "no block is downloaded and then evicted: \(report.evicted.count) were")
        #expect(downloaded.count > 50 && downloaded.count < 293, "\(downloaded.count) blocks fit")
        let used = try Self.du(target)
        print("half budget: \(used) of \(full / 2) bytes (du -sb), \(downloaded.count) blocks; the whole course takes \(full)")
        #expect(used <= full / 2, "du -sb \(used) > budget \(full / 2)")
        #expect(ClientTarget(root: target).diskUsage().total == used)
        #expect(Double(used) >= Double(full / 2) * 0.85, "the budget is used, not wasted: \(used) of \(full / 2)")
        let status = try ClientTarget(root: target).status()
        #expect(status.bytes == used && status.usage.blocks > 0 && status.usage.sharedFiles > 0 && status.usage.state > 0 && status.usage.outlinePages > 0)

        // A course edit and a resync stay within it too.
        _ = try Self.contentAddress(published, hostile: "edit-shared")
        let again = try await ClientTarget(root: target).sync(.init(source: SyncSource(server.baseURL)))
        #expect(again.evicted.allSatisfy { !(again.summary?.plan.downloads.map(\.usageID) ?? []).contains($0) })
        #expect(try Self.du(target) <= full / 2)
    }

    /// One budget can happen to fit; a sweep finds what a plan leaves out (the store's prefix
    /// folders once made a 12 MB budget download 196 blocks of the demo and evict 22).
    @Test func atEveryBudgetNothingDownloadedIsEvictedAndDuStaysWithin() async throws {
        let folder = TestSupport.temporaryFolder("store-budget-sweep")
        let published = try Self.build(TestSupport.demoCourse, into: folder)
        let server = try Self.nginx(published)
        defer { server.stop() }
        let whole = folder + "/whole"
        _ = try await Self.sync(server.baseURL, into: whole)
        let full = try Self.du(whole)
        for percent in [30, 45, 60, 75, 90] as [UInt64] {
            let budget = full * percent / 100
            let target = folder + "/at-\(percent)"
            var request = ClientTarget.SyncRequest(source: SyncSource(server.baseURL))
            request.budget = budget
            let report = try await ClientTarget(root: target).sync(request)
            #expect(report.evicted.isEmpty, "\(percent)%: \(report.evicted.count) blocks downloaded and evicted in one sync")
            let used = try Self.du(target)
            #expect(used <= budget, "\(percent)%: du -sb \(used) > budget \(budget)")
            let again = try await ClientTarget(root: target).sync(.init(source: SyncSource(server.baseURL)))
            let fetched = Set(again.summary?.plan.downloads.map(\.usageID) ?? [])
            #expect(again.evicted.allSatisfy { !fetched.contains($0) }, "\(percent)%: the resync evicted what it downloaded")
            #expect(try Self.du(target) <= budget)
        }
    }

    @Test func expireAfterRemovesUnpinnedBlocksNotOpenedForThatLongWithAnInjectedClock() async throws {
        let folder = TestSupport.temporaryFolder("store-expire")
        let published = try Self.build(TestSupport.exampleCourse, into: folder)
        _ = try Self.contentAddress(published)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let offline = manifest.blocks.filter(\.isOffline).map(\.usageID)
        try #require(offline.count >= 3)
        let (pinned, opened) = (offline[0], offline[1])
        let target = folder + "/device"
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let day = 86_400.0
        var request = ClientTarget.SyncRequest(source: .folder(published))
        request.expireAfter = 30 * day
        request.pin = [pinned]
        request.now = { start }
        let first = try await ClientTarget(root: target).sync(request)
        #expect(first.summary?.failures.isEmpty == true && first.expired.isEmpty)
        #expect(try ClientTarget(root: target).readState().expireAfter == 30 * day, "remembered like the budget")
        _ = try ClientTarget(root: target).markOpened(opened, at: start.addingTimeInterval(20 * day))
        let storeBefore = ClientTarget(root: target).contentStore.contents().count

        // 29 days on, nothing goes; 31 days on, every unpinned block not opened since goes.
        var later = ClientTarget.SyncRequest(source: .folder(published))
        later.now = { start.addingTimeInterval(29 * day) }
        #expect(try await ClientTarget(root: target).sync(later).expired.isEmpty)
        later.now = { start.addingTimeInterval(31 * day) }
        let expired = try await ClientTarget(root: target).sync(later)
        #expect(Set(expired.expired) == Set(offline).subtracting([pinned, opened]), "\(expired.expired)")
        #expect(expired.summary?.plan.downloads.isEmpty == true, "a plain sync does not bring archived blocks back")
        let courseRoot = target + "/" + expired.courseFolder
        let local = try #require(try ManifestFile.read(courseRoot + "/manifest.json"))
        #expect(Set(local.blocks.filter { $0.isOffline && $0.files != nil }.map(\.usageID)) == [pinned, opened])
        for id in offline {
            let block = try #require(manifest.blocks.first { $0.usageID == id })
            let present = FileManager.default.fileExists(atPath: courseRoot + "/" + String(try #require(block.archive).dropLast(4)))
            #expect(present == (id == pinned || id == opened), "\(id)")
        }
        #expect(ClientTarget(root: target).contentStore.contents().count < storeBefore, "their contents went with them")
        _ = try Self.linkedFiles(courseRoot: courseRoot, store: ClientTarget(root: target).contentStore)

        // Asked for, an archived block comes back.
        var ask = ClientTarget.SyncRequest(source: .folder(published))
        ask.selection = [offline[2]]
        ask.now = { start.addingTimeInterval(32 * day) }
        let back = try await ClientTarget(root: target).sync(ask)
        #expect(back.summary?.plan.downloads.map(\.usageID) == [offline[2]])
        #expect(try ClientTarget(root: target).readState().courses[back.courseFolder]?.archived?.contains(offline[2]) != true)
    }

    /// Every file of `root` by the sha256 of its bytes.
    static func filesByHash(under root: String) -> [String: String] {
        Dictionary(TestSupport.files(under: root).map { (SHA256Hex.of(TestSupport.read(root + "/" + $0)), root + "/" + $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The builder's own output (issue 31's builder side), not the test's rewrite: the demo
    /// course built, synced over nginx, its most shared file edited, built again and resynced.
    @Test func theBuildersCourseFilesSyncOnceAndAnEditedStyleSheetIsResentOnce() async throws {
        let folder = TestSupport.temporaryFolder("store-e2e")
        let course = folder + "/course"
        try TestSupport.copy(TestSupport.demoCourse, to: course)
        let published = try Self.build(course, into: folder)
        let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
        let files = try #require(manifest.files, "the builder lists course files")
        let manifestBytes = UInt64(TestSupport.read(published + "/manifest.json").count)
        let floor = files.values.reduce(0) { $0 + $1.compressedSize } + manifestBytes
        let server = try Self.nginx(published)
        defer { server.stop() }
        let target = folder + "/device"
        let first = try await Self.sync(server.baseURL, into: target)
        #expect(first.summary?.failures.isEmpty == true, "\(first.summary?.failures.map { "\($0.error)" } ?? [])")
        let sent = Self.bytesSent(server)
        print("builder's demo course: full sync sent \(sent) bytes, floor \(floor): \(Double(sent) / Double(floor))x")
        #expect(Double(sent) <= Double(floor) * 1.10)
        let courseRoot = target + "/" + first.courseFolder
        #expect(try Self.linkedFiles(courseRoot: courseRoot, store: ClientTarget(root: target).contentStore) > 100)

        var users: [String: Int] = [:]
        for block in manifest.blocks { for key in Set(block.files?.values.map { $0 } ?? []) { users[key, default: 0] += 1 } }
        // The course's own file most blocks list (the demo course's style sheet).
        let courseFiles = Self.filesByHash(under: course)
        let shared = try #require(users.filter { courseFiles[$0.key] != nil }.max { ($0.value, $0.key) < ($1.value, $1.key) })
        #expect(shared.value > 100, "one file of the course is in most blocks: \(shared.value)")
        let source = try #require(courseFiles[shared.key])
        var edited = TestSupport.read(source)
        edited += Array("\n/* edited */\n".utf8)
        try TestSupport.writeBytes(edited, to: source)
        _ = try Self.build(course, into: folder)
        let newKey = SHA256Hex.of(edited)
        let after = try #require(try ManifestFile.read(published + "/manifest.json"))
        let compressed = try #require(after.files?[newKey]?.compressedSize, "the edited content is listed")
        server.clearLog()
        let resync = try await Self.sync(server.baseURL, into: target)
        #expect(resync.summary?.failures.isEmpty == true)
        // The manifest, whole or split: its index and the parts naming the edited blocks.
        let resent = Self.bytesSent(server) { !$0.hasSuffix("/manifest.json") && !$0.hasSuffix("/manifest-index.json") && !$0.contains("/manifest/") }
        print("builder's demo course: an edit to a file \(shared.value) blocks list resent \(resent) bytes besides the manifest (the file: \(compressed) compressed)")
        #expect(resent <= 3 * compressed + 20_000)
        #expect(!ClientTarget(root: target).contentStore.contents().keys.contains(shared.key), "the old version went with its last folder")
    }
}
