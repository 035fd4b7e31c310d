import Foundation
import Manifest
import StoragePublisher
import Testing
import TestSupport

/// A publish without a split manifest (only `manifest.json`, as builders before the split
/// wrote) onto a target that holds an earlier split publish: the target's index, which clients
/// read first, goes right after the new `manifest.json` is in place, and the parts it named are
/// deleted only after it. A device, settled or new, then gets the new publish.
struct StaleIndexPublishTests {
    static let courseFolder = CourseFolder.name(for: "course-v1:CoursepackX+CP101+2026")
    static let marker = "<p>Version 2 of the welcome page.</p>\n"

    /// v1 built with its split form in `out-v1`; v2 (the welcome page edited) in `out-v2`, its
    /// split form removed.
    static func builds(_ label: String) throws -> (root: String, v1: String, v2: String) {
        let root = TestSupport.temporaryFolder(label)
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/course")
        #expect(try TestSupport.coursepack(["build", root + "/course", "--out", root + "/out-v1"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: root + "/out-v1/" + ManifestIndex.fileName), "v1 is published split")
        let page = root + "/course/html/welcome_page.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array(marker.utf8), to: page)
        #expect(try TestSupport.coursepack(["build", root + "/course", "--out", root + "/out-v2"]).status == 0)
        try TestSupport.removeSplitManifest(root + "/out-v2")
        return (root, root + "/out-v1", root + "/out-v2")
    }

    /// Whether the device's copy of the course shows v2's welcome page.
    static func deviceHasV2(_ device: String) -> Bool {
        let page = device + "/CoursepackX+CP101+2026/html/welcome_page/index.html"
        return String(decoding: TestSupport.read(page), as: UTF8.self).contains("Version 2 of the welcome page")
    }

    @Test func aPublishWithoutASplitManifestRemovesTheTargetsIndexBeforeItsParts() throws {
        let (root, v1, v2) = try Self.builds("stale-index-folder")
        let web = root + "/www"
        let target = web + "/" + Self.courseFolder
        let first = try TestSupport.coursepack(["publish", v1, "--to", web, "--keep-removed", "0s"])
        #expect(first.status == 0, "\(first.stderr)")
        let oldParts = try #require(try PublishedManifest.read(folder: v1)?.index).parts.map(\.path)
        #expect(!oldParts.isEmpty)
        // A device settled on v1.
        let settled = root + "/settled-device"
        let before = try TestSupport.coursepack(["sync", target, "--to", settled])
        #expect(before.status == 0, "\(before.stderr)")
        #expect(!Self.deviceHasV2(settled))

        let second = try TestSupport.coursepack(["publish", v2, "--to", web, "--keep-removed", "0s", "--report", root + "/report.json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target + "/" + ManifestIndex.fileName), "the v1 index is still in the target")
        let expected = try #require(try ManifestFile.read(v2 + "/manifest.json"))
        #expect(try ManifestFile.read(target + "/manifest.json") == expected)
        // Its parts went after it (no grace period here), never before.
        for part in oldParts { #expect(!FileManager.default.fileExists(atPath: target + "/" + part), "\(part) left") }
        let report = try JSONDecoder().decode(PublishReport.self, from: Data(TestSupport.read(root + "/report.json")))
        #expect(report.manifestUploaded)
        let writes = report.writes
        let putManifest = try #require(writes.firstIndex(of: "PUT manifest.json"), "\(writes)")
        let deleteIndex = try #require(writes.firstIndex(of: "DELETE " + ManifestIndex.fileName), "\(writes)")
        #expect(putManifest < deleteIndex, "\(writes)")
        for part in oldParts {
            let deleted = try #require(writes.firstIndex(of: "DELETE " + part), "\(writes)")
            #expect(deleteIndex < deleted, "\(part) deleted while the index named it: \(writes)")
        }

        // A settled device and a new one both get v2.
        for device in [settled, root + "/new-device"] {
            let sync = try TestSupport.coursepack(["sync", target, "--to", device])
            #expect(sync.status == 0, "\(device): \(sync.stdout)\(sync.stderr)")
            #expect(Self.deviceHasV2(device), "\(device): \(sync.stdout)")
        }

        // Published again as it is: nothing left to do.
        let again = try TestSupport.coursepack(["publish", v2, "--to", web, "--report", root + "/again.json"])
        #expect(again.status == 0, "\(again.stderr)")
        let third = try JSONDecoder().decode(PublishReport.self, from: Data(TestSupport.read(root + "/again.json")))
        #expect(!third.manifestUploaded && third.writes.filter { !$0.contains(CourseIndex.key) && !$0.contains(PublishRecord.key) }.isEmpty, "\(third.writes)")
    }

    /// With a grace period the index still goes at once; the parts it named wait for the period.
    @Test func withAGracePeriodTheIndexGoesAtOnceAndItsPartsWait() throws {
        let (root, v1, v2) = try Self.builds("stale-index-grace")
        let web = root + "/www"
        let target = web + "/" + Self.courseFolder
        #expect(try TestSupport.coursepack(["publish", v1, "--to", web]).status == 0)
        let oldParts = try #require(try PublishedManifest.read(folder: v1)?.index).parts.map(\.path)
        let second = try TestSupport.coursepack(["publish", v2, "--to", web, "--keep-removed", "1h", "--report", root + "/report.json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target + "/" + ManifestIndex.fileName))
        for part in oldParts { #expect(FileManager.default.fileExists(atPath: target + "/" + part), "\(part) deleted before its grace period") }
        let report = try JSONDecoder().decode(PublishReport.self, from: Data(TestSupport.read(root + "/report.json")))
        #expect(Set(oldParts).isSubset(of: Set(report.scheduledDeletions.map(\.key))), "\(report.scheduledDeletions)")
        let device = root + "/device"
        let sync = try TestSupport.coursepack(["sync", target, "--to", device])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(Self.deviceHasV2(device))
    }
}

extension PublishToS3Tests {
    @Test func aPublishWithoutASplitManifestRemovesTheBucketsStaleIndex() async throws {
        let moto = try MotoServer(checkingSignatures: false)
        defer { Self.stop(moto) }
        let (root, v1, v2) = try StaleIndexPublishTests.builds("stale-index-s3")
        #expect(try Self.coursepack(Self.publishArguments(v1, moto, ["--keep-removed", "0s"]), environment: Self.credentials(moto)).status == 0)
        let store = Self.store(moto)
        #expect(try await store.head(ManifestIndex.fileName) != nil)
        let oldParts = try #require(try PublishedManifest.read(folder: v1)?.index).parts.map(\.path)

        moto.clearLog()
        let second = try Self.coursepack(Self.publishArguments(v2, moto, ["--keep-removed", "0s"]), environment: Self.credentials(moto))
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try await store.head(ManifestIndex.fileName) == nil, "the v1 index is still in the bucket")
        let expected = try #require(try ManifestFile.read(v2 + "/manifest.json"))
        #expect(try ManifestFile.decode(try #require(try await store.get("manifest.json")), path: "manifest.json") == expected)
        let prefix = "/\(moto.bucket)/c101/\(Self.courseFolder)/"
        let writes = moto.writes()
        let putManifest = try #require(writes.firstIndex(of: "PUT \(prefix)manifest.json"), "\(writes)")
        let deleteIndex = try #require(writes.firstIndex(of: "DELETE \(prefix)\(ManifestIndex.fileName)"), "\(writes)")
        #expect(putManifest < deleteIndex, "\(writes)")
        for part in oldParts {
            let deleted = try #require(writes.firstIndex(of: "DELETE \(prefix)\(part)"), "\(writes)")
            #expect(deleteIndex < deleted, "\(part) deleted while the index named it: \(writes)")
        }
        let device = root + "/device"
        let sync = try Self.coursepack(["sync", "\(moto.endpoint)/\(moto.bucket)/c101/\(Self.courseFolder)", "--to", device])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(StaleIndexPublishTests.deviceHasV2(device), "\(sync.stdout)")
    }
}
