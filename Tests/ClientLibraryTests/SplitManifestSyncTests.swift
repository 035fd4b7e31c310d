import ClientTarget
import FileSystem
import Foundation
import Manifest
import SyncClient
import Testing
import TestSupport

/// Issue 33 on the device: a course published in the split form (`manifest-index.json` naming
/// content-addressed parts) syncs as from `manifest.json`, a resync after one edit fetches the
/// index and one part, and hostile indexes and parts are refused with the previous install
/// intact; against a real nginx on loopback, from courses built by the real builder.
@Suite(.serialized) struct SplitManifestSyncTests {
    /// Builds a copy of the demo course into `folder/published` (the copy at `folder/course`,
    /// to edit).
    static func build(into folder: String) throws -> String {
        let course = folder + "/course"
        if !FileManager.default.fileExists(atPath: course) { try TestSupport.copy(TestSupport.demoCourse, to: course) }
        let published = folder + "/published"
        let built = try TestSupport.coursepack(["build", course, "--out", published, "-q"])
        #expect(built.status == 0, "\(built.stderr)")
        return published
    }

    /// Writes the split form of `published`'s manifest.json beside it (what the builder will
    /// write), without `manifest.json` unless `keepingManifest`.
    @discardableResult
    static func split(_ published: String, keepingManifest: Bool = false) throws -> SplitManifest {
        let manifestPath = published + "/manifest.json"
        let manifest = try #require(try ManifestFile.read(manifestPath))
        let split = ManifestSplit.split(manifest)
        try write(split, into: published)
        if !keepingManifest { unlink(manifestPath) }
        return split
    }

    static func write(_ split: SplitManifest, into published: String) throws {
        try? FileManager.default.removeItem(atPath: published + "/" + ManifestPart.folder)
        try FileManager.default.createDirectory(atPath: published + "/" + ManifestPart.folder, withIntermediateDirectories: true)
        // A part without bytes is one a hostile index names and the server does not have.
        for part in split.parts where !part.bytes.isEmpty {
            try Data(part.bytes).write(to: URL(fileURLWithPath: published + "/" + part.reference.path))
        }
        try Data(ManifestFile.encode(split.index)).write(to: URL(fileURLWithPath: published + "/" + ManifestIndex.fileName))
    }

    static func nginx(_ root: String) throws -> NginxServer {
        guard let server = try NginxServer(serving: root) else {
            Issue.record("nginx is not installed: the split manifest's sync tests need it (apt-get install nginx)")
            throw CancellationError()
        }
        return server
    }

    /// Requests nginx logged whose path passes `counted`, and the bytes it sent for them.
    static func sent(_ server: NginxServer, _ counted: (String) -> Bool) -> (requests: [String], bytes: UInt64) {
        var requests: [String] = []
        var bytes: UInt64 = 0
        for line in server.requests() {
            let fields = line.split(separator: " ")
            guard fields.count >= 4, counted(String(fields[1])) else { continue }
            requests.append(String(fields[1]) + " " + String(fields[2]))
            bytes += UInt64(fields[3]) ?? 0
        }
        return (requests, bytes)
    }

    static func isManifestRequest(_ path: String) -> Bool {
        path.hasSuffix("/" + ManifestIndex.fileName) || path.contains("/" + ManifestPart.folder + "/") || path.hasSuffix("/manifest.json")
    }

    static func sync(_ source: String, into target: String) async throws -> ClientTarget.SyncReport {
        try await ClientTarget(root: target).sync(.init(source: SyncSource(source)))
    }

    /// Every regular file under `root` but sync state, relative path → sha256.
    static func tree(_ root: String) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            if relative.split(separator: "/").contains(where: { $0 == Substring(ClientTarget.stateFolderName) }) { continue }
            var info = stat()
            guard lstat(root + "/" + relative, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            files[relative] = try SHA256Hex.ofFile(root + "/" + relative)
        }
        return files
    }

    @Test func aCourseSyncedFromTheSplitFormIsTheSameAsFromManifestJSON() async throws {
        let folder = TestSupport.temporaryFolder("split-same")
        let published = try Self.build(into: folder)
        try TestSupport.copy(published, to: folder + "/www/plain")
        try TestSupport.copy(published, to: folder + "/www/split")
        let split = try Self.split(folder + "/www/split")
        #expect(split.index.parts.count >= 2, "the demo course splits into several parts")
        let server = try Self.nginx(folder + "/www")
        defer { server.stop() }

        let plain = try await Self.sync(server.baseURL + "/plain", into: folder + "/plain-device")
        let fromSplit = try await Self.sync(server.baseURL + "/split", into: folder + "/split-device")
        #expect(fromSplit.summary?.failures.isEmpty == true, "\(fromSplit.summary?.failures.map { "\($0.error)" } ?? [])")
        #expect((fromSplit.summary?.downloadedBlocks ?? 0) > 100)
        let plainTree = try Self.tree(folder + "/plain-device/" + plain.courseFolder)
        let splitTree = try Self.tree(folder + "/split-device/" + fromSplit.courseFolder)
        #expect(plainTree.count > 100)
        #expect(plainTree == splitTree, "files differ: \(Set(plainTree.map { "\($0.key) \($0.value)" }).symmetricDifference(splitTree.map { "\($0.key) \($0.value)" }).sorted().prefix(5))")
        let splitRequests = Self.sent(server) { $0.hasPrefix("/split/") && Self.isManifestRequest($0) }.requests
        #expect(splitRequests.first == "/split/\(ManifestIndex.fileName) 200", "the index is asked for first: \(splitRequests.prefix(3))")
        #expect(!splitRequests.contains { $0.hasSuffix("manifest.json 404") || $0.hasSuffix("manifest.json 200") })
        #expect(splitRequests.count == 1 + split.index.parts.count, "the index and each part once: \(splitRequests)")
        let kept = SyncClient.stateFolder(of: folder + "/split-device/" + fromSplit.courseFolder) + "/parts"
        #expect(Set((try? FileManager.default.contentsOfDirectory(atPath: kept)) ?? []) == Set(split.index.parts.map { $0.sha256 + ".json" }))
    }

    /// Hosting that answers every unknown path with its home page (`try_files … /index.html`,
    /// as single-page apps are served) sends HTML with 200 for the index of a publish that has
    /// only `manifest.json`: the client reads `manifest.json`, and a broken index is still refused.
    @Test func anHTMLPageAnsweredForTheIndexIsNoIndex() async throws {
        let folder = TestSupport.temporaryFolder("split-spa")
        let published = try Self.build(into: folder)
        unlink(published + "/" + ManifestIndex.fileName)
        try? FileManager.default.removeItem(atPath: published + "/" + ManifestPart.folder)
        try TestSupport.write(["index.html": "<!doctype html>\n<html><body><div id=app></div></body></html>\n"], under: published)
        let server = try #require(try NginxServer(serving: published, locations: "location / { try_files $uri /index.html; }"))
        defer { server.stop() }

        let report = try await Self.sync(server.baseURL, into: folder + "/device")
        #expect(report.summary?.failures.isEmpty == true, "\(report.summary?.failures.map { "\($0.error)" } ?? [])")
        #expect((report.summary?.downloadedBlocks ?? 0) > 100)
        // nginx logs the page it fell back to: the index was asked for first and answered with it.
        let requests = Self.sent(server) { _ in true }.requests
        #expect(requests.prefix(2) == ["/index.html 200", "/manifest.json 200"], "\(requests.prefix(4))")

        // An index that is JSON but broken is a broken publish, not an absent one.
        try TestSupport.write([ManifestIndex.fileName: "{\"course_id\": "], under: published)
        await #expect(throws: (any Error).self) { try await Self.sync(server.baseURL, into: folder + "/device") }
    }

    @Test func aResyncAfterOneEditFetchesTheIndexAndOnePart() async throws {
        let folder = TestSupport.temporaryFolder("split-edit")
        let published = try Self.build(into: folder)
        // manifest.json stays: the incremental builder reads it (the client does not).
        let before = try Self.split(published, keepingManifest: true)
        let server = try Self.nginx(published)
        defer { server.stop() }
        let target = folder + "/device"
        let first = try await Self.sync(server.baseURL, into: target)
        #expect(first.summary?.failures.isEmpty == true)

        let used = try Self.usedHTMLFile(published: published, manifest: before)
        let html = folder + "/course/html/" + (try #require(used))
        try (String(contentsOfFile: html, encoding: .utf8) + "\n<p>One more sentence for issue 33.</p>\n").write(toFile: html, atomically: true, encoding: .utf8)
        _ = try Self.build(into: folder)
        let after = try Self.split(published, keepingManifest: true)
        let changed = Set(after.index.parts.map(\.sha256)).subtracting(before.index.parts.map(\.sha256))
        #expect(changed.count == 1, "one block edited changes one part")
        server.clearLog()
        let resync = try await Self.sync(server.baseURL, into: target)
        #expect(resync.summary?.failures.isEmpty == true)
        #expect(resync.summary?.downloadedBlocks == 2, "the edited block and the search index")
        let (requests, bytes) = Self.sent(server, Self.isManifestRequest)
        #expect(!requests.contains { $0.hasPrefix("/manifest.json") }, "\(requests)")
        #expect(requests.count == 2, "the index and the one part that changed: \(requests)")
        #expect(requests.contains("/\(ManifestIndex.fileName) 200"))
        #expect(changed.allSatisfy { requests.contains("/\(ManifestPart.path(sha256: $0)) 200") })
        let largestPart = after.index.parts.map(\.size).max() ?? 0
        #expect(bytes <= UInt64(ManifestFile.encode(after.index).count) + largestPart && bytes <= 5_000_000, "\(bytes) bytes to learn of one edit")
        print("one edit: \(bytes) bytes of manifest fetched (index \(ManifestFile.encode(after.index).count), \(after.index.parts.count) parts)")
        let installed = try #require(try ManifestFile.read(target + "/" + resync.courseFolder + "/manifest.json"))
        let offered = ManifestSplit.assemble(after.index, parts: try after.parts.map { try ManifestFile.decodePart($0.bytes, path: "part") })
        #expect(installed.blocks.filter(\.isOffline).map(\.sha256) == offered.blocks.filter(\.isOffline).map(\.sha256))
        let kept = SyncClient.stateFolder(of: target + "/" + resync.courseFolder) + "/parts"
        #expect(Set((try? FileManager.default.contentsOfDirectory(atPath: kept)) ?? []) == Set(after.index.parts.map { $0.sha256 + ".json" }), "the part replaced is removed")
    }

    /// An html file of the course whose block is offline (so that editing it changes an archive).
    static func usedHTMLFile(published: String, manifest: SplitManifest) throws -> String? {
        let files = try FileManager.default.contentsOfDirectory(atPath: TestSupport.demoCourse + "/html").filter { $0.hasSuffix(".html") }.sorted()
        let parts = try manifest.parts.map { try ManifestFile.decodePart($0.bytes, path: "part") }
        let ids = Set(parts.flatMap(\.blocks).filter { $0.isOffline && $0.type == "html" }.map(\.usageID))
        return files.first { name in ids.contains { $0.hasSuffix("@" + name.dropLast(5)) } }
    }

    @Test func aSourceWithoutAnIndexIsReadFromManifestJSON() async throws {
        let folder = TestSupport.temporaryFolder("split-fallback")
        let published = try Self.build(into: folder)
        try TestSupport.removeSplitManifest(published)
        let server = try Self.nginx(published)
        defer { server.stop() }
        let report = try await Self.sync(server.baseURL, into: folder + "/device")
        #expect(report.summary?.failures.isEmpty == true)
        #expect((report.summary?.downloadedBlocks ?? 0) > 100)
        let requests = Self.sent(server, Self.isManifestRequest).requests
        #expect(requests.prefix(2) == ["/\(ManifestIndex.fileName) 404", "/manifest.json 200"], "\(requests)")
        let folderReport = try await Self.sync(published, into: folder + "/folder-device")
        #expect((folderReport.summary?.downloadedBlocks ?? 0) > 100)
    }
}

extension SplitManifestSyncTests {
    /// A source that goes back to `manifest.json` alone: the kept index and parts are stale and
    /// go, over HTTP and from a folder alike (they would otherwise stay, up to 1 GiB, forever).
    @Test func aSourceBackToManifestJSONForgetsTheKeptPartsAndIndex() async throws {
        let folder = TestSupport.temporaryFolder("split-forget")
        let published = try Self.build(into: folder)
        #expect(FileManager.default.fileExists(atPath: published + "/" + ManifestIndex.fileName), "the builder writes the split form")
        let server = try Self.nginx(published)
        defer { server.stop() }
        for (name, source) in [("http", server.baseURL), ("folder", published)] {
            try? FileManager.default.removeItem(atPath: published)
            _ = try Self.build(into: folder)
            let target = folder + "/device-" + name
            let first = try await Self.sync(source, into: target)
            let state = SyncClient.stateFolder(of: target + "/" + first.courseFolder)
            let kept = (try? FileManager.default.contentsOfDirectory(atPath: state + "/parts")) ?? []
            #expect(!kept.isEmpty, "\(name): the parts are kept after a split sync")
            try TestSupport.removeSplitManifest(published)
            let again = try await Self.sync(source, into: target)
            #expect(again.summary?.failures.isEmpty == true)
            #expect(!FileManager.default.fileExists(atPath: state + "/parts"), "\(name): the kept parts went")
            #expect(!FileManager.default.fileExists(atPath: state + "/" + ManifestIndex.fileName), "\(name): the kept index went")
        }
    }
}

/// Hostile indexes and parts: each refused with an error naming the file, nothing installed
/// changed. The parts tampered with are new ones (the device keeps the parts it has read).
@Suite(.serialized) struct SplitManifestHostileTests {
    enum Tamper: CaseIterable {
        case bytesDoNotMatch, tooLarge, truncated, pathOutside, duplicateUsageIDs, partsPastTheLimit
        case tooManyParts, emptyPart, countsDoNotMatch, outlineTooDeep, outlineEntryTwice

        /// Refused from the index alone, before any part is downloaded.
        var refusedBeforeParts: Bool { [.partsPastTheLimit, .pathOutside, .tooManyParts, .emptyPart].contains(self) }
    }

    /// The good split with its first part replaced by a changed one (a block renamed), then
    /// spoiled as `tamper` says; returns the split and what the error must name.
    static func tampered(_ good: SplitManifest, _ tamper: Tamper, into published: String) throws -> [String] {
        var part = try ManifestFile.decodePart(good.parts[0].bytes, path: "part")
        part.blocks[0].displayName = (part.blocks[0].displayName ?? "") + " (edited)"
        if tamper == .duplicateUsageIDs {
            let other = try ManifestFile.decodePart(good.parts[1].bytes, path: "part")
            part.blocks.append(other.blocks[0])
        }
        if tamper == .outlineTooDeep {
            // A chain one level past the limit: a recursive walker would go as deep as it is long.
            let depth = OutlineEntry.maximumDepth + 1
            part.outline = (0..<depth).map { level in
                OutlineEntry(usageID: "deep-\(level)", type: "vertical", displayName: nil, children: level + 1 < depth ? ["deep-\(level + 1)"] : [])
            }
        }
        if tamper == .outlineEntryTwice {
            let outlinePart = try #require(good.parts.first { $0.reference.containers > 0 })
            let entry = try #require(try ManifestFile.decodePart(outlinePart.bytes, path: "part").outline.first)
            part.outline = [entry]
        }
        let bytes = ManifestFile.encode(part)
        var reference = PartReference(
            sha256: SHA256Hex.of(bytes), size: UInt64(bytes.count), blocks: part.blocks.count, containers: part.outline.count)
        var served = bytes
        var named = [reference.path]
        switch tamper {
        case .bytesDoNotMatch: served[served.count / 2] ^= 0x20
        case .tooLarge: served += Array(repeating: UInt8(ascii: " "), count: 4096)
        case .truncated: served.removeLast(10)
        case .duplicateUsageIDs: named = ["listed twice"]
        case .pathOutside:
            reference.sha256 = "../../../outside"
            named = [ManifestIndex.fileName, "not a sha256"]
        case .partsPastTheLimit: named = [ManifestIndex.fileName, "add up to"]
        case .tooManyParts: named = [ManifestIndex.fileName, "parts, more than the \(ManifestSplit.maximumParts)"]
        case .emptyPart:
            reference.blocks = 0
            named = [ManifestIndex.fileName, "with 0 blocks and 0 outline entries"]
        case .countsDoNotMatch:
            reference.blocks += 1
            named = [reference.path, "says \(reference.blocks)"]
        case .outlineTooDeep: named = ["nests deeper than \(OutlineEntry.maximumDepth) levels"]
        case .outlineEntryTwice: named = ["outline entry", "listed twice"]
        }
        var split = good
        split.parts[0] = (reference, served)
        if tamper == .partsPastTheLimit {
            // Each part within the manifest limit, together past the split limit (1 GiB).
            for number in 0..<20 {
                split.parts.append((PartReference(sha256: String(format: "%064x", number), size: 60 << 20, blocks: 1, containers: 0), []))
            }
        }
        if tamper == .tooManyParts {
            for number in 0..<ManifestSplit.maximumParts {
                split.parts.append((PartReference(sha256: String(format: "%064x", number), size: 100, blocks: 1, containers: 0), []))
            }
        }
        split.index.parts = split.parts.map(\.reference)
        if tamper == .pathOutside {
            split.parts[0] = (good.parts[0].reference, good.parts[0].bytes)
        }
        try SplitManifestSyncTests.write(split, into: published)
        return named
    }

    @Test(arguments: Tamper.allCases) func aHostileSplitManifestIsRefusedAndTheInstallKept(_ tamper: Tamper) async throws {
        let folder = TestSupport.temporaryFolder("split-hostile")
        let published = try SplitManifestSyncTests.build(into: folder)
        let good = try SplitManifestSyncTests.split(published)
        let server = try SplitManifestSyncTests.nginx(published)
        defer { server.stop() }
        let target = folder + "/device"
        let first = try await SplitManifestSyncTests.sync(server.baseURL, into: target)
        #expect(first.summary?.failures.isEmpty == true)
        let courseRoot = target + "/" + first.courseFolder
        let installed = try SplitManifestSyncTests.tree(courseRoot)

        let named = try Self.tampered(good, tamper, into: published)
        server.clearLog()
        do {
            _ = try await SplitManifestSyncTests.sync(server.baseURL, into: target)
            Issue.record("\(tamper): the sync was not refused")
        } catch {
            let message = "\(error)"
            for text in named { #expect(message.contains(text), "\(tamper): \(message)") }
        }
        #expect(try SplitManifestSyncTests.tree(courseRoot) == installed, "\(tamper): the install changed")
        if tamper.refusedBeforeParts {
            let parts = SplitManifestSyncTests.sent(server) { $0.contains("/\(ManifestPart.folder)/") }.requests
            #expect(parts.isEmpty, "refused before any part is downloaded: \(parts)")
        }
        // The good publish again: the course syncs, nothing of the refused one kept.
        try SplitManifestSyncTests.write(good, into: published)
        let again = try await SplitManifestSyncTests.sync(server.baseURL, into: target)
        #expect(again.summary?.failures.isEmpty == true)
        #expect(try SplitManifestSyncTests.tree(courseRoot) == installed)
    }
}

/// From a folder, a part longer than its index says is refused by its size on disk, not the
/// size the index gives.
@Suite struct SplitManifestFolderTests {
    @Test func aPartLongerThanItsIndexSaysIsRefusedWithItsRealSize() throws {
        let folder = TestSupport.temporaryFolder("split-folder")
        let published = try SplitManifestSyncTests.build(into: folder)
        let good = try SplitManifestSyncTests.split(published)
        _ = try SplitManifestHostileTests.tampered(good, .tooLarge, into: published)
        let index = try ManifestFile.decodeIndex(TestSupport.read(published + "/" + ManifestIndex.fileName), path: "index")
        let reference = try #require(index.parts.first)
        let result = try TestSupport.coursepack(["sync", published, "--to", folder + "/device"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("part is \(reference.size + 4096) bytes, the index says \(reference.size)"), "\(result.stderr)")
    }
}

/// A sync with nothing to do: found out from the index alone, nothing large rewritten, and the
/// summary line's time is the whole run's.
@Suite(.serialized) struct NoOpSyncTests {
    /// The seconds `coursepack sync` printed, and the time the process took, measured outside.
    static func timedSync(_ source: String, into target: String) throws -> (printed: Double, wall: Double, stdout: String) {
        let start = Date()
        let result = try TestSupport.coursepack(["sync", source, "--to", target])
        let wall = Date().timeIntervalSince(start)
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("coursepack: synced") }, "\(result.stdout)")
        let words = line.split(separator: " ")
        let index = try #require(words.lastIndex(of: "s"))
        return (try #require(Double(words[index - 1])), wall, result.stdout)
    }

    @Test func theSummaryLineReportsTheWholeRun() throws {
        let folder = TestSupport.temporaryFolder("noop-time")
        let published = try SplitManifestSyncTests.build(into: folder)
        try SplitManifestSyncTests.split(published, keepingManifest: true)
        let target = folder + "/device"
        for run in ["first sync", "no-op sync"] {
            let timed = try Self.timedSync(published, into: target)
            print("\(run): printed \(timed.printed) s, the process took \(timed.wall) s")
            #expect(timed.printed >= 0.8 * timed.wall - 0.05, "\(run): the summary says \(timed.printed) s, the run took \(timed.wall) s")
            #expect(timed.printed <= timed.wall + 0.05)
        }
    }

    @Test func aNoOpSyncReadsOnlyTheIndexAndRewritesNothing() async throws {
        let folder = TestSupport.temporaryFolder("noop-index")
        let published = try SplitManifestSyncTests.build(into: folder)
        let split = try SplitManifestSyncTests.split(published)
        let server = try SplitManifestSyncTests.nginx(published)
        defer { server.stop() }
        let target = folder + "/device"
        let first = try await SplitManifestSyncTests.sync(server.baseURL, into: target)
        #expect(first.summary?.failures.isEmpty == true)
        let courseRoot = target + "/" + first.courseFolder
        let watched = [courseRoot + "/manifest.json", courseRoot + "/index.html", target + "/index.html", target + "/.coursepack-sync/target.json"]
        let before = watched.map(Self.stamp)
        server.clearLog()
        let again = try await SplitManifestSyncTests.sync(server.baseURL, into: target)
        #expect(again.summary?.downloadedBlocks == 0 && again.summary?.manifestNotModified == true)
        #expect(again.summary?.unchangedBlocks == first.summary.map { $0.downloadedBlocks + $0.unchangedBlocks }, "every block counted unchanged")
        #expect(SplitManifestSyncTests.sent(server) { _ in true }.requests == ["/\(ManifestIndex.fileName) 200"], "the index only")
        #expect(watched.map(Self.stamp) == before, "nothing rewritten")
        #expect(split.index.parts.count >= 2)

        // A block folder gone: the sync is not a no-op, it installs the block again.
        let block = try #require(try ManifestFile.read(courseRoot + "/manifest.json")?.blocks.first { $0.isOffline && $0.type == "html" })
        let blockFolder = try #require(block.archive.flatMap(ArchivePath.installFolder(of:)))
        try FileManager.default.removeItem(atPath: courseRoot + "/" + blockFolder)
        let repaired = try await SplitManifestSyncTests.sync(server.baseURL, into: target)
        #expect(repaired.summary?.downloadedBlocks == 1, "\(repaired.repairs)")
        #expect(FileManager.default.fileExists(atPath: courseRoot + "/" + blockFolder))
        let settledAgain = try await SplitManifestSyncTests.sync(server.baseURL, into: target)
        #expect(settledAgain.summary?.settledBlocks != nil && settledAgain.summary?.downloadedBlocks == 0)
    }

    static func stamp(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "missing" }
        return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ino)"
    }
}

/// Not a check: a tool to measure large courses before the builder writes the split form.
/// `COURSEPACK_SPLIT_PUBLISHED=FOLDER swift test --filter SplitPublishedFolder` writes the split
/// form of FOLDER/manifest.json beside it (and removes it with COURSEPACK_SPLIT_DROP=1).
@Suite struct SplitPublishedFolder {
    static let folder = ProcessInfo.processInfo.environment["COURSEPACK_SPLIT_PUBLISHED"]

    @Test(.enabled(if: folder != nil, "a tool: COURSEPACK_SPLIT_PUBLISHED names the folder to split"))
    func splitThePublishedFolder() throws {
        let folder = try #require(Self.folder)
        let split = try SplitManifestSyncTests.split(folder, keepingManifest: ProcessInfo.processInfo.environment["COURSEPACK_SPLIT_DROP"] != "1")
        print("split \(folder): \(split.index.parts.count) parts, index \(ManifestFile.encode(split.index).count) bytes")
    }
}
