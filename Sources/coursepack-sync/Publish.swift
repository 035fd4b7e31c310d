import ArgumentParser
import CommandLineSupport
import Foundation
import StoragePublisher

struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Publish a built folder to S3-compatible storage or a web root: archives first, manifest last, removed archives after a grace period.",
        discussion: """
            Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, or from \
            the shared credentials and config files (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, \
            ~/.aws/) for --profile or AWS_PROFILE; never from a flag. Exit codes: 0 published; 1 the \
            publish stopped after it had started writing (the previous publish is still served, \
            complete); 2 bad usage, an unusable folder (a symbolic link, FIFO or device among the \
            files it would upload), another course's manifest in the way, refused credentials or a \
            missing bucket (nothing changed). Each course goes into its own folder of the target \
            (printed, and recorded in the target's courses.json); --flat publishes at the target itself.
            """)

    @Argument(help: "The built folder (holding manifest.json).")
    var folder: String

    @Option(name: .customLong("to"), help: "s3://bucket/prefix, or a local folder.")
    var target: String

    @Option(name: .customLong("endpoint-url"), help: "An S3-compatible service's URL (MinIO, Ceph, R2, GCS interoperability).")
    var endpointURL: String?

    @Option(name: .long, help: "The bucket's region (default: AWS_REGION, AWS_DEFAULT_REGION, the profile's, us-east-1).")
    var region: String?

    @Option(name: .long, help: "A profile of the shared credentials/config files.")
    var profile: String?

    @Flag(name: .customLong("path-style"), help: "Address the bucket as ENDPOINT/bucket/key (MinIO, most self-hosted services).")
    var pathStyle = false

    @Option(name: .customLong("keep-removed"), help: "How long archives of removed blocks stay downloadable: 24h, 30m, 90s, 2d.")
    var keepRemoved = "24h"

    @Flag(name: .long, help: "Publish at the target itself instead of in the course's own folder of it (for clients already pointed there); another course's manifest there is never replaced.")
    var flat = false

    @Option(name: .long, help: "Uploads in flight at once.")
    var jobs = 4

    @Flag(name: .customLong("dry-run"), help: "Print what would be uploaded and deleted; change nothing.")
    var dryRun = false

    @Option(name: .long, help: "Write a JSON report of the publish to FILE.")
    var report: String?

    @Option(name: .customLong("cache-control-manifest"), help: "Cache-Control of manifest.json.")
    var cacheControlManifest = PublishOptions.defaultCacheControlManifest

    @Option(name: .customLong("cache-control-archives"), help: "Cache-Control of the archives.")
    var cacheControlArchives = PublishOptions.defaultCacheControlArchives

    @Option(name: .customLong("multipart-threshold"), help: "Archives larger than this go up in 8 MiB parts (S3); one at or below it is sent from memory in one PUT: 8MiB, 64MiB, bytes, at most 5GiB.")
    var multipartThreshold = "8MiB"

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        guard PublishTarget.duration(keepRemoved) != nil else { throw ValidationError("--keep-removed \(keepRemoved): not a duration (24h, 30m, 90s, 2d)") }
        guard let threshold = PublishTarget.size(multipartThreshold) else { throw ValidationError("--multipart-threshold \(multipartThreshold): not a size (64MiB, 8MiB, bytes)") }
        guard threshold <= 5 << 30 else { throw ValidationError("--multipart-threshold \(multipartThreshold): at most 5GiB, S3's limit for one PUT") }
        if let endpointURL {
            guard let url = URL(string: endpointURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ValidationError("--endpoint-url \(endpointURL): not an http(s) URL")
            }
        }
    }

    func run() async throws {
        let store: any ObjectStore = try orExitBadInput { () throws -> any ObjectStore in
            switch try PublishTarget.parse(target) {
            case .folder(let path):
                return FolderStore(root: path)
            case .s3(let bucket, let prefix):
                let aws = try AWSConfiguration.resolve(profile: profile, region: region, environment: ProcessInfo.processInfo.environment)
                return S3Store(configuration: .init(
                    bucket: bucket, prefix: prefix, region: aws.region, credentials: aws.credentials,
                    endpoint: endpointURL.flatMap(URL.init(string:)), pathStyle: pathStyle,
                    multipartThreshold: PublishTarget.size(multipartThreshold) ?? 8 << 20))
            }
        }
        let options = PublishOptions(
            keepRemoved: PublishTarget.duration(keepRemoved) ?? 86400, jobs: jobs, dryRun: dryRun,
            cacheControlManifest: cacheControlManifest, cacheControlArchives: cacheControlArchives, layout: flat ? .flat : .perCourse)
        let outcome: PublishReport
        do {
            outcome = try await Publisher(folder: folder, store: store, options: options).publish()
        } catch {
            printError("error: \(error)")
            throw ExitCode(error.changedNothing ? ExitStatus.badInput : ExitStatus.blocksFailed)
        }
        if let report {
            do {
                try outcome.json().write(to: URL(fileURLWithPath: report))
            } catch {
                printError("error: \(report): cannot write the report: \(error.localizedDescription)")
                throw ExitCode(ExitStatus.badInput)
            }
        }
        let verb = dryRun ? "would upload" : "uploaded"
        for upload in outcome.uploads {
            printOutput("\(dryRun ? "upload  " : "uploaded")  \(upload.key)  \(upload.bytes) bytes  (\(upload.reason)\(upload.stagedAs.map { ", staged as \($0)" } ?? ""))")
        }
        for key in outcome.deleted { printOutput("\(dryRun ? "delete  " : "deleted ")  \(key)") }
        for item in outcome.scheduledDeletions { printOutput("keep      \(item.key)  until \(item.deleteAfter)") }
        for warning in outcome.warnings { printError("warning: \(warning)") }
        printOutput("coursepack: \(outcome.courseID): manifest at \(outcome.manifest)")
        printOutput("coursepack: \(dryRun ? "dry run, " : "")\(outcome.target): \(verb) \(outcome.uploads.count) archives (\(outcome.uploads.reduce(0) { $0 + $1.bytes }) bytes), \(outcome.unchanged) unchanged, manifest \(outcome.manifestUploaded ? (dryRun ? "would be replaced" : "replaced") : "unchanged"), \(outcome.deleted.count) deleted, \(outcome.scheduledDeletions.count) kept for the grace period, in \(String(format: "%.2f", outcome.seconds)) s")
    }
}
