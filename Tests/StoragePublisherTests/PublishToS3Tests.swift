import AWSSigV4
import Crypto
import Foundation
import Manifest
import StoragePublisher
import Testing
import TestSupport

/// `coursepack publish` against a real S3 protocol server (moto) on loopback.
@Suite(.serialized)
struct PublishToS3Tests {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `coursepack ARGUMENTS` with `environment` added (credentials travel only there).
    static func coursepack(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let process = try start(arguments, environment: environment)
        process.process.waitUntilExit()
        return process.finish()
    }

    struct Started {
        var process: Process
        var folder: String
        func finish() -> Run {
            Run(
                status: process.terminationStatus,
                stdout: String(decoding: TestSupport.read(folder + "/out"), as: UTF8.self),
                stderr: String(decoding: TestSupport.read(folder + "/err"), as: UTF8.self))
        }
    }

    static func start(_ arguments: [String], environment: [String: String]) throws -> Started {
        let folder = TestSupport.temporaryFolder("run")
        _ = FileManager.default.createFile(atPath: folder + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: folder + "/err", contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.coursepackBinary)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"] { merged[name] = nil }
        merged["AWS_SHARED_CREDENTIALS_FILE"] = folder + "/no-credentials"
        merged["AWS_CONFIG_FILE"] = folder + "/no-config"
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.standardOutput = FileHandle(forWritingAtPath: folder + "/out")
        process.standardError = FileHandle(forWritingAtPath: folder + "/err")
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return Started(process: process, folder: folder)
    }

    static func credentials(_ moto: MotoServer) -> [String: String] {
        ["AWS_ACCESS_KEY_ID": moto.accessKey, "AWS_SECRET_ACCESS_KEY": moto.secretKey, "AWS_REGION": "us-east-1"]
    }

    static func publishArguments(_ folder: String, _ moto: MotoServer, prefix: String = "c101", _ extra: [String] = []) -> [String] {
        ["publish", folder, "--to", "s3://\(moto.bucket)/\(prefix)", "--endpoint-url", moto.endpoint, "--path-style"] + extra
    }

    /// The example course's own folder of the target: each course goes into one (flat with --flat).
    static let courseFolder = CourseFolder.name(for: "course-v1:CoursepackX+CP101+2026")

    static func store(_ moto: MotoServer, prefix: String = "c101/" + courseFolder) -> S3Store {
        S3Store(configuration: .init(
            bucket: moto.bucket, prefix: prefix, region: "us-east-1",
            credentials: AWSCredentials(accessKeyID: moto.accessKey, secretAccessKey: moto.secretKey),
            endpoint: URL(string: moto.endpoint), pathStyle: true))
    }

    /// A private copy of the example course and a build of it.
    static func builtCourse(_ label: String) throws -> (course: String, out: String) {
        let root = TestSupport.temporaryFolder(label)
        try TestSupport.copy(TestSupport.exampleCourse, to: root + "/course")
        try build(root + "/course", into: root + "/out")
        return (root + "/course", root + "/out")
    }

    static func build(_ course: String, into out: String) throws {
        let result = try TestSupport.coursepack(["build", course, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
    }

    static func archives(of manifest: CourseManifest) -> [(key: String, size: UInt64?, sha256: String?)] {
        manifest.blocks.compactMap { block in block.archive.map { ($0, block.size, block.sha256) } }
            + [manifest.runtime].compactMap { $0 }.map { ($0.archive, $0.size, $0.sha256) }
            + [manifest.search].compactMap { $0 }.map { ($0.archive, $0.size, $0.sha256) }
    }

    /// Problems of the remote publish as a client would meet them: every archive the remote
    /// manifest names is downloaded and checked against its size and sha256.
    static func remoteProblems(_ store: S3Store) async throws -> [String] {
        guard let data = try await store.get("manifest.json") else { return [] }
        let manifest = try ManifestFile.decode(data, path: "remote manifest.json")
        var problems: [String] = []
        for archive in archives(of: manifest) {
            guard let bytes = try await store.get(archive.key) else {
                problems.append("\(archive.key): missing")
                continue
            }
            if UInt64(bytes.count) != archive.size { problems.append("\(archive.key): \(bytes.count) bytes, manifest says \(archive.size ?? 0)") }
            let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            if digest != archive.sha256 { problems.append("\(archive.key): sha256 \(digest), manifest says \(archive.sha256 ?? "")") }
        }
        return problems
    }

    static func stop(_ moto: MotoServer) {
        moto.stop()
        #expect(!moto.isRunning, "moto_server outlived the test")
        let check = try? TestSupport.run(TestSupport.which("python3") ?? "/usr/bin/python3", ["-c", "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', \(moto.port))))"])
        #expect(check?.status != 0, "port \(moto.port) still accepts connections after moto_server was stopped")
    }

    /// An endpoint given by IP address, or `localhost`, cannot carry the bucket in its host name:
    /// the publish puts it in the path on its own, as the AWS CLI does, without `--path-style`.
    @Test(arguments: ["127.0.0.1"])  // localhost and IPv6: the unit test below
    func anEndpointByAddressNeedsNoPathStyleFlag(host: String) async throws {
        let moto = try MotoServer(checkingSignatures: true)
        defer { Self.stop(moto) }
        let (_, out) = try Self.builtCourse("publish-by-address")
        let endpoint = "http://\(host):\(moto.port)"
        let published = try Self.coursepack(
            ["publish", out, "--to", "s3://\(moto.bucket)/c101", "--endpoint-url", endpoint], environment: Self.credentials(moto))
        #expect(published.status == 0, "\(published.stderr)")
        #expect(moto.writes().contains("PUT /\(moto.bucket)/c101/\(Self.courseFolder)/manifest.json"), "\(moto.writes())")
        #expect(try await Self.remoteProblems(Self.store(moto)).isEmpty)
    }

    @Test func onlyAnAddressOrLocalhostPutsTheBucketInThePath() {
        for host in ["127.0.0.1", "10.0.0.7", "::1", "fe80::1", "LOCALHOST"] {
            #expect(S3Store.cannotNameABucket(host), "\(host)")
        }
        for host in ["s3.amazonaws.com", "minio.example.org", "1.2.3", "1.2.3.4.example.org", "300.1.1.1x"] {
            #expect(!S3Store.cannotNameABucket(host), "\(host)")
        }
        #expect(!S3Store.cannotNameABucket(nil))
    }

    @Test func firstPublishUploadsEverythingAndOneEditUploadsOneArchiveThenTheManifest() async throws {
        let moto = try MotoServer(checkingSignatures: true)
        defer { Self.stop(moto) }
        let (course, out) = try Self.builtCourse("publish-edit")
        let local = try #require(try ManifestFile.read(out + "/manifest.json"))
        let expected = Set(Self.archives(of: local).map(\.key))

        // One upload at a time here: moto's recorder appends each request to its log from the
        // request's own thread, and concurrent large entries can interleave and be lost.
        let first = try Self.coursepack(Self.publishArguments(out, moto, ["--jobs", "1", "--report", out + ".report.json"]), environment: Self.credentials(moto))
        #expect(first.status == 0, "\(first.stderr)")
        let firstWrites = moto.writes()
        let prefix = "PUT /\(moto.bucket)/c101/\(Self.courseFolder)/"
        let uploadedArchives = firstWrites.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".zip") }.map { String($0.dropFirst(prefix.count)) }
        #expect(Set(uploadedArchives) == expected)
        // Each archive once: no request was tried again. (Uploads from a file through
        // URLSession lost answers the server had sent; each such PUT waited out its timeout and
        // stood here twice.)
        #expect(uploadedArchives.count == expected.count, "\(uploadedArchives)")
        // The manifest is the last archive-or-manifest write, after every archive; the index at
        // the target's root comes after it.
        let order = firstWrites.filter { !$0.contains(PublishRecord.key) && !$0.contains(CourseIndex.key) }
        #expect(order.suffix(2) == ["\(prefix)manifest.json", "\(prefix)manifest-index.json"], "\(order)")
        #expect(firstWrites.last == "PUT /\(moto.bucket)/c101/\(CourseIndex.key)")
        #expect(order.filter { $0.hasSuffix("manifest.json") }.count == 1)
        // Cross-checked with the server's objects: size and stored sha256 as the manifest says.
        let store = Self.store(moto)
        for archive in Self.archives(of: local) {
            let object = try await store.head(archive.key)
            #expect(object == StoredObject(size: archive.size ?? 0, sha256: archive.sha256), "\(archive.key)")
        }
        #expect(try await Self.remoteProblems(store).isEmpty)
        let report = try JSONDecoder().decode(PublishReport.self, from: Data(TestSupport.read(out + ".report.json")))
        let localParts = try #require(try PublishedManifest.read(folder: out)?.index).parts
        #expect(report.uploads.count == expected.count + (local.files?.count ?? 0) + localParts.count && report.unchanged == 0 && report.manifestUploaded)

        // Nothing changed: nothing is written.
        moto.clearLog()
        let again = try Self.coursepack(Self.publishArguments(out, moto, ["--jobs", "1"]), environment: Self.credentials(moto))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(moto.writes().isEmpty, "\(moto.writes())")

        // One html edit and a rebuild.
        let page = course + "/html/welcome_page.html"
        try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>One more paragraph.</p>\n".utf8), to: page)
        try Self.build(course, into: out)
        moto.clearLog()
        let edited = try Self.coursepack(Self.publishArguments(out, moto, ["--jobs", "1"]), environment: Self.credentials(moto))
        #expect(edited.status == 0, "\(edited.stderr)")
        let log = moto.requests()
        print("request log of the one-edit republish:\n" + log.joined(separator: "\n"))
        let allWrites = moto.writes().filter { !$0.contains(PublishRecord.key) && !$0.contains(CourseIndex.key) }
        // The split manifest's parts: new ones (and the interim's) go up before the manifest
        // that names them; the index follows each manifest.json.
        let partWrites = allWrites.filter { $0.contains("/manifest/") }
        #expect(!partWrites.isEmpty && partWrites.allSatisfy { write in
            allWrites.firstIndex(of: write)! < allWrites.firstIndex { $0.hasSuffix("/manifest.json") }!
        }, "\(allWrites)")
        let writes = allWrites.filter { !$0.contains("/manifest/") && !$0.hasSuffix("/manifest-index.json") }
        #expect(allWrites.filter { $0.hasSuffix("/manifest-index.json") }.count == 2, "interim and final: \(allWrites)")
        #expect(allWrites.last?.hasSuffix("/manifest-index.json") == true, "\(allWrites)")
        let c101 = "/\(moto.bucket)/c101/\(Self.courseFolder)"
        let newLocal = try #require(try ManifestFile.read(out + "/manifest.json"))
        let sha = try #require(newLocal.blocks.first { $0.archive == "html/welcome_page.zip" }?.sha256)
        // One archive uploaded, beside the live one, and the new search index (named by its
        // content, so never live before); an interim manifest naming them; the server copies the
        // archive to its own name; then the final manifest.
        let search = try #require(newLocal.search?.archive)
        // Before them, the contents the old manifest did not list (the page, the search index's
        // index.js and the one part holding the page's text), each under its content name.
        let newContents = (newLocal.files ?? [:]).filter { local.files?[$0.key] == nil }.map { $0.value.path(sha256: $0.key) }.sorted()
        #expect(newContents.count == 3)
        #expect(writes == newContents.map { "PUT \(c101)/\($0)" } + [
            "PUT \(c101)/html/.welcome_page.zip.staged-\(sha.prefix(16))",
            "PUT \(c101)/\(search)",
            "PUT \(c101)/manifest.json",
            "PUT \(c101)/html/welcome_page.zip <- \(c101)/html/.welcome_page.zip.staged-\(sha.prefix(16))",
            "PUT \(c101)/manifest.json",
        ])
        #expect(try await store.head("html/welcome_page.zip") == StoredObject(size: try #require(newLocal.blocks.first { $0.archive == "html/welcome_page.zip" }?.size), sha256: sha))
        #expect(try await Self.remoteProblems(store).isEmpty)
        let remote = try ManifestFile.decode(try #require(try await store.get("manifest.json")), path: "remote")
        #expect(remote == newLocal)
    }

    @Test func removedBlockArchiveSurvivesTheGracePeriodAndIsDeletedAfter() async throws {
        let moto = try MotoServer(checkingSignatures: true)
        defer { Self.stop(moto) }
        let (course, out) = try Self.builtCourse("publish-remove")
        #expect(try Self.coursepack(Self.publishArguments(out, moto), environment: Self.credentials(moto)).status == 0)
        let store = Self.store(moto)
        #expect(try await store.head("html/handout_page.zip") != nil)

        let unit = course + "/vertical/media_unit.xml"
        let text = String(decoding: TestSupport.read(unit), as: UTF8.self).replacingOccurrences(of: "<html url_name=\"handout_page\"/>", with: "")
        try TestSupport.write(["vertical/media_unit.xml": text], under: course)
        try Self.build(course, into: out)
        #expect(!FileManager.default.fileExists(atPath: out + "/html/handout_page.zip"))

        let removed = try Self.coursepack(Self.publishArguments(out, moto, ["--keep-removed", "1h"]), environment: Self.credentials(moto))
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await store.head("html/handout_page.zip") != nil, "deleted before the grace period")
        let record = try JSONDecoder().decode(PublishRecord.self, from: try #require(try await store.get(PublishRecord.key)))
        #expect(record.removed.keys.contains("html/handout_page.zip"))
        #expect(!moto.writes().contains { $0.hasPrefix("DELETE") })

        // Within the grace period a publish keeps it.
        #expect(try Self.coursepack(Self.publishArguments(out, moto, ["--keep-removed", "1h"]), environment: Self.credentials(moto)).status == 0)
        #expect(try await store.head("html/handout_page.zip") != nil)

        // The grace period runs from the removal: a publish whose period has passed deletes it.
        // (Told by `--keep-removed 0s`, not by sleeping: a loaded machine makes any short
        // period pass between two publishes.)
        moto.clearLog()
        let later = try Self.coursepack(Self.publishArguments(out, moto, ["--keep-removed", "0s"]), environment: Self.credentials(moto))
        #expect(later.status == 0, "\(later.stderr)")
        #expect(moto.writes().contains("DELETE /\(moto.bucket)/c101/\(Self.courseFolder)/html/handout_page.zip"))
        #expect(try await store.head("html/handout_page.zip") == nil)
        let after = try JSONDecoder().decode(PublishRecord.self, from: try #require(try await store.get(PublishRecord.key)))
        #expect(after.removed.isEmpty && after.pending.isEmpty)
        #expect(try await Self.remoteProblems(store).isEmpty)
    }

    @Test func publishKilledAtRandomPointsNeverLeavesAManifestNamingAMissingOrMismatchingObject() async throws {
        let moto = try MotoServer(checkingSignatures: true)
        defer { Self.stop(moto) }
        // Two versions of the course that differ in every html page, and one block fewer.
        let (courseA, outA) = try Self.builtCourse("publish-kill-a")
        let (courseB, outB) = try Self.builtCourse("publish-kill-b")
        for name in ["welcome_page", "styled_page", "unit_style", "interactive_page", "handout_page"] {
            let page = courseB + "/html/\(name).html"
            try TestSupport.writeBytes(TestSupport.read(page) + Array("<p>Version B of \(name).</p>\n".utf8), to: page)
        }
        let unit = courseB + "/vertical/media_unit.xml"
        try TestSupport.write(["vertical/media_unit.xml": String(decoding: TestSupport.read(unit), as: UTF8.self).replacingOccurrences(of: "<html url_name=\"handout_page\"/>", with: "")], under: courseB)
        try Self.build(courseB, into: outB)
        _ = courseA

        let store = Self.store(moto)
        // Kills land within the time the quickest whole publish takes on this machine now, so most
        // of them interrupt one, however fast or loaded the machine is.
        var fastest = Double.infinity
        for folder in [outA, outB, outA, outB] {
            let began = Date()
            let whole = try Self.coursepack(Self.publishArguments(folder, moto, ["--jobs", "1", "--keep-removed", "0s"]), environment: Self.credentials(moto))
            #expect(whole.status == 0, "\(whole.stderr)")
            fastest = min(fastest, Date().timeIntervalSince(began))
        }
        let window = UInt32(max(fastest * 0.8, 0.02) * 1_000_000)
        var generator = SeededGenerator(state: 19)
        var killed = 0
        for round in 0..<20 {
            let folder = round % 2 == 0 ? outA : outB
            let started = try Self.start(Self.publishArguments(folder, moto, ["--jobs", "1", "--keep-removed", "0s"]), environment: Self.credentials(moto))
            usleep(UInt32.random(in: 0...window, using: &generator))
            if started.process.isRunning {
                kill(started.process.processIdentifier, SIGKILL)
                killed += 1
            }
            started.process.waitUntilExit()
            let problems = try await Self.remoteProblems(store)
            #expect(problems.isEmpty, "round \(round): \(problems)")
        }
        #expect(killed >= 10, "only \(killed) of 20 publishes were killed mid-way: the test proves little")
        // A complete publish afterwards converges and cleans up what the killed ones left.
        let final = try Self.coursepack(Self.publishArguments(outB, moto, ["--keep-removed", "0s"]), environment: Self.credentials(moto))
        #expect(final.status == 0, "\(final.stderr)")
        #expect(try await Self.remoteProblems(store).isEmpty)
        let remote = try ManifestFile.decode(try #require(try await store.get("manifest.json")), path: "remote")
        #expect(remote == (try ManifestFile.read(outB + "/manifest.json")))
        #expect(try await store.head("html/handout_page.zip") == nil)
    }

    @Test func badCredentialsOrAMissingBucketExit2AndChangeNothing() async throws {
        let moto = try MotoServer(checkingSignatures: true)
        defer { Self.stop(moto) }
        let (_, out) = try Self.builtCourse("publish-denied")
        var wrong = Self.credentials(moto)
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let denied = try Self.coursepack(Self.publishArguments(out, moto), environment: wrong)
        #expect(denied.status == 2)
        #expect(denied.stderr.contains("SignatureDoesNotMatch") && denied.stderr.contains("nothing was changed"), "\(denied.stderr)")

        var unknown = Self.credentials(moto)
        unknown["AWS_ACCESS_KEY_ID"] = "AKIAUNKNOWNUNKNOWN00"
        let unknownKey = try Self.coursepack(Self.publishArguments(out, moto), environment: unknown)
        #expect(unknownKey.status == 2, "\(unknownKey.stderr)")

        let missing = try Self.coursepack(
            ["publish", out, "--to", "s3://no-such-bucket/c101", "--endpoint-url", moto.endpoint, "--path-style"], environment: Self.credentials(moto))
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("s3://no-such-bucket: the bucket does not exist"), "\(missing.stderr)")

        let none = try Self.coursepack(Self.publishArguments(out, moto))
        #expect(none.status == 2)
        #expect(none.stderr.contains("no AWS credentials"), "\(none.stderr)")

        #expect(moto.writes().isEmpty, "\(moto.writes())")
        #expect(try await Self.store(moto).get("manifest.json") == nil)
    }

    /// Each archive and course file of a real course goes up in one request: none waits out a
    /// timeout and is sent again. Uploads from a file through URLSession (FoundationNetworking)
    /// lost the answer to 4 or 5 of the demo course's PUTs in every publish here, each then
    /// sent again after 120 s.
    @Test func everyObjectOfTheDemoCourseGoesUpInOneRequest() async throws {
        let moto = try MotoServer(checkingSignatures: false)
        defer { Self.stop(moto) }
        let out = TestSupport.temporaryFolder("publish-demo") + "/out"
        try Self.build(TestSupport.demoCourse, into: out)
        // One upload at a time: moto's recorder loses entries written from concurrent requests.
        // It takes seconds; each request that waits out its timeout adds 120 s (and is caught
        // below, sent twice), and a publish of several is stopped rather than left to hold up
        // the suite.
        let started = try Self.start(Self.publishArguments(out, moto, prefix: "demo", ["--jobs", "1"]), environment: Self.credentials(moto))
        let deadline = Date().addingTimeInterval(300)
        while started.process.isRunning, Date() < deadline { usleep(100_000) }
        let stalled = started.process.isRunning
        if stalled {
            kill(started.process.processIdentifier, SIGKILL)
            started.process.waitUntilExit()
        }
        #expect(!stalled, "the publish was still running after 300 s: requests waited out their 120 s timeout")
        let result = started.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let uploads = moto.writes().filter { $0.hasPrefix("PUT ") && ($0.hasSuffix(".zip") || $0.contains("/files/")) }
        #expect(uploads.count > 600, "the demo course has over 600 archives and files")
        let repeated = Dictionary(grouping: uploads, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(repeated.isEmpty, "sent again: \(repeated.prefix(5))")
    }

    @Test func largeArchivesGoUpInPartsStreamedFromDisk() async throws {
        let moto = try MotoServer(checkingSignatures: true)
        defer { Self.stop(moto) }
        // A folder as a build leaves it, with one 13 MiB archive (incompressible bytes).
        let out = TestSupport.temporaryFolder("publish-multipart")
        var generator = SeededGenerator(state: 7)
        let bytes = (0..<(13 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try TestSupport.writeBytes(bytes, to: out + "/html/big.zip")
        let sha = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let manifest = CourseManifest(
            courseID: "course-v1:X+Y+Z", publishedAt: "2026-11-23T10:00:00Z", generator: "test",
            blocks: [BlockEntry(usageID: "block-v1:X+Y+Z+type@html+block@big", type: "html", displayName: "Big", parents: [], archive: "html/big.zip", size: UInt64(bytes.count), sha256: sha, contentHash: sha, lastModified: "2026-11-23T10:00:00Z")])
        try ManifestFile.write(manifest, to: out + "/manifest.json")

        let result = try Self.coursepack(Self.publishArguments(out, moto, prefix: "big", ["--multipart-threshold", "8MiB"]), environment: Self.credentials(moto))
        #expect(result.status == 0, "\(result.stderr)")
        let writes = moto.writes().filter { $0.contains("big.zip") }
        #expect(writes.count == 4, "\(writes)")
        #expect(writes.first?.hasSuffix("big.zip?uploads=") == true, "\(writes)")
        #expect(writes.filter { $0.contains("partNumber=") }.count == 2)
        let store = Self.store(moto, prefix: "big/" + CourseFolder.name(for: "course-v1:X+Y+Z"))
        #expect(try await store.head("html/big.zip") == StoredObject(size: UInt64(bytes.count), sha256: sha))
        #expect(try await Self.remoteProblems(store).isEmpty)
    }

    @Test func syncWorksAgainstThePublishedBucketsURL() async throws {
        let moto = try MotoServer(checkingSignatures: false)
        defer { Self.stop(moto) }
        let (_, out) = try Self.builtCourse("publish-sync")
        #expect(try Self.coursepack(Self.publishArguments(out, moto), environment: Self.credentials(moto)).status == 0)
        let device = TestSupport.temporaryFolder("publish-device")
        let sync = try Self.coursepack(["sync", "\(moto.endpoint)/\(moto.bucket)/c101/\(Self.courseFolder)", "--to", device])
        #expect(sync.status == 0, "\(sync.stderr)")
        let local = try #require(try ManifestFile.read(out + "/manifest.json"))
        for block in local.blocks where block.archive != nil {
            // A device folder holds each course in its own folder (TARGET/<course>/).
            let folder = device + "/CoursepackX+CP101+2026/" + String(try #require(block.archive).dropLast(4))
            #expect(FileManager.default.fileExists(atPath: folder + "/index.html"), "\(folder)")
        }
    }
}
