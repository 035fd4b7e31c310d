import Foundation
import Manifest
import StoragePublisher
import Testing
import TestSupport

/// `publish` uploads only the built folder's own regular files: a symbolic link or a special
/// file anywhere among what it would upload is refused by name before anything is written, and
/// one swapped in after planning is refused at upload time.
struct PublishLocalFilesTests {
    static let courseID = "course-v1:CoursepackX+CP101+2026"

    /// A build of the example course in a fresh folder, and a secret file outside it.
    static func built(_ label: String) throws -> (root: String, out: String, secret: String) {
        let root = TestSupport.temporaryFolder(label)
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/course")
        let build = try TestSupport.coursepack(["build", root + "/course", "--out", root + "/out"])
        #expect(build.status == 0, "\(build.stderr)")
        try TestSupport.write(["secret.txt": "api-key=do-not-publish\n"], under: root)
        return (root, root + "/out", root + "/secret.txt")
    }

    /// Every file under `folder` with its bytes: "changed nothing" compares two of these.
    static func snapshot(_ folder: String) -> [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: TestSupport.files(under: folder).map { ($0, TestSupport.read(folder + "/" + $0)) })
    }

    /// Moves `path` out of the build and puts a symbolic link to the moved copy in its place:
    /// the bytes reached through the link are exactly the manifest's, so only the link itself
    /// can be the reason for a refusal.
    static func replaceWithLink(_ path: String, movedTo elsewhere: String) throws {
        try FileManager.default.createDirectory(atPath: (elsewhere as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: path, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: elsewhere)
    }

    @Test(arguments: ["archive", "type folder", "manifest", "runtime folder", "archive to a secret", "FIFO archive"])
    func aLinkOrSpecialFileInTheBuiltFolderIsRefusedByNameAndNothingIsWritten(_ variant: String) throws {
        let (root, out, secret) = try Self.built("publish-link-\(variant.replacingOccurrences(of: " ", with: "-"))")
        let local = try #require(try ManifestFile.read(out + "/manifest.json"))
        let runtime = try #require(local.runtime?.archive)
        let offender: String
        switch variant {
        case "archive":
            offender = out + "/html/welcome_page.zip"
            try Self.replaceWithLink(offender, movedTo: root + "/elsewhere/welcome_page.zip")
        case "type folder":
            offender = out + "/html"
            try Self.replaceWithLink(offender, movedTo: root + "/elsewhere/html")
        case "manifest":
            offender = out + "/manifest.json"
            try Self.replaceWithLink(offender, movedTo: root + "/elsewhere/manifest.json")
        case "runtime folder":
            offender = out + "/runtime"
            try Self.replaceWithLink(offender, movedTo: root + "/elsewhere/runtime")
        case "archive to a secret":
            offender = out + "/" + runtime
            try FileManager.default.removeItem(atPath: offender)
            try FileManager.default.createSymbolicLink(atPath: offender, withDestinationPath: secret)
        default:
            offender = out + "/html/styled_page.zip"
            try FileManager.default.removeItem(atPath: offender)
            #expect(mkfifo(offender, 0o644) == 0)
        }
        let web = root + "/www"
        let result = try TestSupport.coursepack(["publish", out, "--to", web])
        #expect(result.status == 2, "\(variant): \(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains(offender + ":"), "\(variant): the error names the offending path: \(result.stderr)")
        let reason = variant == "FIFO archive" ? "is a FIFO" : "symbolic link"
        #expect(result.stderr.contains(reason), "\(variant): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: web), "\(variant): something was written: \(TestSupport.files(under: web))")
    }

    @Test func aLinkInARepublishLeavesThePreviousPublishAsItWas() throws {
        let (root, out, secret) = try Self.built("publish-link-again")
        let web = root + "/www"
        #expect(try TestSupport.coursepack(["publish", out, "--to", web]).status == 0)
        let before = Self.snapshot(web)
        // A changed block whose new archive is a link to the secret: a new upload, so the old
        // code would have read through the link.
        let archive = out + "/html/welcome_page.zip"
        try FileManager.default.removeItem(atPath: archive)
        try FileManager.default.createSymbolicLink(atPath: archive, withDestinationPath: secret)
        let result = try TestSupport.coursepack(["publish", out, "--to", web, "--dry-run"])
        #expect(result.status == 2 && result.stderr.contains(archive + ": "), "\(result.stderr)")
        let real = try TestSupport.coursepack(["publish", out, "--to", web])
        #expect(real.status == 2 && real.stderr.contains("symbolic link"), "\(real.stderr)")
        #expect(Self.snapshot(web) == before)
    }

    /// Writes through to a folder; before the first write it runs `swap` once, as another
    /// process changing the built folder between planning and upload would.
    final class SwappingStore: ObjectStore, @unchecked Sendable {
        let inner: FolderStore
        private let lock = NSLock()
        private var swap: (() throws -> Void)?

        init(_ inner: FolderStore, swap: @escaping () throws -> Void) {
            self.inner = inner
            self.swap = swap
        }

        var location: String { inner.location }

        private func firstWrite() {
            lock.lock()
            let pending = swap
            swap = nil
            lock.unlock()
            try? pending?()
        }

        func head(_ key: String) async throws(StoreError) -> StoredObject? { try await inner.head(key) }
        func get(_ key: String) async throws(StoreError) -> Data? { try await inner.get(key) }
        func put(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError) {
            firstWrite()
            try await inner.put(key, file: file, metadata: metadata)
        }
        func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
            firstWrite()
            try await inner.put(key, data: data, metadata: metadata)
        }
        func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
            firstWrite()
            try await inner.copy(source, to: key, metadata: metadata)
        }
        func delete(_ key: String) async throws(StoreError) {
            firstWrite()
            try await inner.delete(key)
        }
    }

    @Test(arguments: ["link to the same bytes", "link to a secret", "linked type folder", "FIFO"])
    func aLinkSwappedInAfterPlanningIsNotUploaded(_ variant: String) async throws {
        let (root, out, secret) = try Self.built("publish-swap-\(variant.replacingOccurrences(of: " ", with: "-"))")
        let archive = out + "/html/welcome_page.zip"
        let swap: () throws -> Void = {
            switch variant {
            case "link to the same bytes": try Self.replaceWithLink(archive, movedTo: root + "/elsewhere/welcome_page.zip")
            case "link to a secret":
                try FileManager.default.removeItem(atPath: archive)
                try FileManager.default.createSymbolicLink(atPath: archive, withDestinationPath: secret)
            case "linked type folder": try Self.replaceWithLink(out + "/html", movedTo: root + "/elsewhere/html")
            default:
                try FileManager.default.removeItem(atPath: archive)
                _ = mkfifo(archive, 0o644)
            }
        }
        let web = root + "/www"
        let store = SwappingStore(FolderStore(root: web), swap: swap)
        let publisher = Publisher(folder: out, store: store, options: PublishOptions(jobs: 1))
        do {
            _ = try await publisher.publish()
            Issue.record("\(variant): the publish went on through a swapped-in link")
        } catch {
            // The link is named: the archive, or the type folder above it.
            let offender = variant == "linked type folder" ? out + "/html:" : archive + ":"
            #expect(error.description.contains(offender), "\(variant): \(error)")
            #expect(error.description.contains("changed after the publish was planned"), "\(variant): \(error)")
            #expect(!error.changedNothing, "\(variant): the record had been written")
        }
        let folder = web + "/" + CourseFolder.name(for: Self.courseID)
        #expect(!FileManager.default.fileExists(atPath: folder + "/html/welcome_page.zip"), "\(variant): the swapped file went up")
        #expect(!FileManager.default.fileExists(atPath: folder + "/manifest.json"))
        let secretBytes = TestSupport.read(secret)
        for file in TestSupport.files(under: web) {
            #expect(TestSupport.read(web + "/" + file) != secretBytes, "\(variant): \(file) holds the secret")
        }
    }
}
