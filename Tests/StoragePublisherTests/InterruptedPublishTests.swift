import Crypto
import Foundation
import Manifest
import StoragePublisher
import Testing
import TestSupport

/// A publish that stops after each possible number of writes, in turn: the target's manifest
/// always names complete, matching archives, and one complete publish afterwards leaves exactly
/// what its manifest names (nothing orphaned, with a zero grace period).
struct InterruptedPublishTests {
    /// Passes writes through until `limit` of them have been made, then fails every one, as a
    /// killed process would stop writing.
    final class StoppingStore: ObjectStore, @unchecked Sendable {
        let inner: FolderStore
        let limit: Int
        private let lock = NSLock()
        private var writes = 0

        init(_ inner: FolderStore, after limit: Int) {
            self.inner = inner
            self.limit = limit
        }

        var location: String { inner.location }

        private func allow() throws(StoreError) {
            lock.lock()
            defer { lock.unlock() }
            writes += 1
            if writes > limit { throw .unreachable(location: location, operation: "write", reason: "stopped after \(limit) writes") }
        }

        func head(_ key: String) async throws(StoreError) -> StoredObject? { try await inner.head(key) }
        func get(_ key: String) async throws(StoreError) -> Data? { try await inner.get(key) }
        func put(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError) {
            try allow()
            try await inner.put(key, file: file, metadata: metadata)
        }
        func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
            try allow()
            try await inner.put(key, data: data, metadata: metadata)
        }
        func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
            try allow()
            try await inner.copy(source, to: key, metadata: metadata)
        }
        func delete(_ key: String) async throws(StoreError) {
            try allow()
            try await inner.delete(key)
        }
    }

    static func problems(in target: String) throws -> [String] {
        guard let manifest = try ManifestFile.read(target + "/manifest.json") else { return [] }
        var archives = manifest.blocks.compactMap { block in block.archive.map { ($0, block.size, block.sha256) } }
        if let runtime = manifest.runtime { archives.append((runtime.archive, runtime.size, runtime.sha256)) }
        // The index, written after manifest.json, names only parts that are in place, and they
        // assemble a manifest whose archives are checked too.
        if let indexBytes = try PublishedManifest.readFile(target + "/" + ManifestIndex.fileName) {
            let index = try ManifestFile.decodeIndex(indexBytes, path: ManifestIndex.fileName)
            let parts: [ManifestPart]
            do {
                parts = try PublishedManifest.readParts(of: index, at: target) { relative throws(ManifestError) in
                    try PublishedManifest.readFile(target + "/" + relative)
                }
            } catch {
                return ["\(error)"]
            }
            let assembled = ManifestSplit.assemble(index, parts: parts)
            archives += assembled.blocks.compactMap { block in block.archive.map { ($0, block.size, block.sha256) } }
        }
        return archives.compactMap { key, size, sha256 in
            let bytes = TestSupport.read(target + "/" + key)
            guard FileManager.default.fileExists(atPath: target + "/" + key) else { return "\(key): missing" }
            let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            return UInt64(bytes.count) == size && digest == sha256 ? nil : "\(key): does not match"
        }
    }

    static func publish(_ folder: String, to target: String, stoppingAfter limit: Int = .max) async -> Bool {
        let store = StoppingStore(FolderStore(root: target), after: limit)
        do {
            _ = try await Publisher(folder: folder, store: store, options: PublishOptions(keepRemoved: 0, jobs: 1)).publish()
            return true
        } catch {
            return false
        }
    }

    @Test func everyStoppingPointLeavesACompletePublishAndNoOrphans() async throws {
        let root = TestSupport.temporaryFolder("interrupted")
        // Version B changes every html page and drops one block.
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/a")
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/b")
        for name in ["welcome_page", "styled_page", "unit_style", "interactive_page", "handout_page"] {
            let page = root + "/b/html/\(name).html"
            try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>Version B.</p>\n".utf8), to: page)
        }
        let unit = root + "/b/vertical/media_unit.xml"
        try TestSupport.write(["vertical/media_unit.xml": String(decoding: TestSupport.read(unit), as: UTF8.self).replacingOccurrences(of: "<html url_name=\"handout_page\"/>", with: "")], under: root + "/b")
        for version in ["a", "b"] {
            #expect(try TestSupport.coursepack(["build", root + "/" + version, "--out", root + "/out-" + version]).status == 0)
        }
        let expected = try #require(try ManifestFile.read(root + "/out-b/manifest.json"))
        let expectedFiles = Set(
            expected.blocks.compactMap(\.archive) + [expected.runtime?.archive, expected.search?.archive].compactMap { $0 }
                + (expected.files ?? [:]).map { $0.value.path(sha256: $0.key) } + [ManifestIndex.fileName]
                + (try #require(try PublishedManifest.read(folder: root + "/out-b")?.index)).parts.map(\.path))

        var stopped = 0
        // Every stopping point of B, up to the first limit at which B completes.
        for limit in 0..<64 where stopped == limit {
            let store = root + "/target-\(limit)"
            // The course's own folder of the target, and after it the index at the root.
            let target = store + "/" + CourseFolder.name(for: expected.courseID)
            #expect(await Self.publish(root + "/out-a", to: store))
            // B stops after `limit` writes, then A after half as many, then B runs to the end.
            if !(await Self.publish(root + "/out-b", to: store, stoppingAfter: limit)) { stopped += 1 }
            #expect(try Self.problems(in: target).isEmpty, "B stopped after \(limit) writes")
            _ = await Self.publish(root + "/out-a", to: store, stoppingAfter: limit / 2)
            #expect(try Self.problems(in: target).isEmpty, "A stopped after \(limit / 2) writes")
            #expect(await Self.publish(root + "/out-b", to: store))
            #expect(try ManifestFile.read(target + "/manifest.json") == expected)
            #expect(try JSONDecoder().decode(CourseIndex.self, from: Data(TestSupport.read(store + "/" + CourseIndex.key))).courses[expected.courseID]?.publishedAt == expected.publishedAt)
            let files = Set(TestSupport.files(under: target).filter { !$0.hasSuffix("manifest.json") && !$0.hasSuffix(PublishRecord.key) })
            #expect(files == expectedFiles, "after stopping at \(limit): left \(files.subtracting(expectedFiles).sorted()), missing \(expectedFiles.subtracting(files).sorted())")
        }
        #expect(stopped >= 10, "B publishes in \(stopped) writes: too few stopping points to prove much")
    }
}
