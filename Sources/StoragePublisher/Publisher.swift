import Crypto
import FileSystem
import Foundation
import Manifest

/// Publishes a built folder to a target in the order clients rely on: archives first (a changed
/// one under a staged name first when the live manifest names it), the manifest last, and the
/// archives no manifest names any more deleted only once the grace period has passed.
public struct Publisher: Sendable {
    public let folder: String
    public let store: any ObjectStore
    public let options: PublishOptions

    public init(folder: String, store: any ObjectStore, options: PublishOptions) {
        self.folder = folder
        self.store = store
        self.options = options
    }

    /// One file the local manifest names.
    struct LocalFile: Sendable, Equatable {
        var key: String
        var size: UInt64
        var sha256: String
    }

    /// An archive to upload: new, or changed (then `staged` beside the one in use when the
    /// live manifest names it).
    struct Upload: Sendable {
        var file: LocalFile
        var staged: String?
        var reason: String
    }

    /// Publishes the course under its own folder of the target (`CourseFolder.name(for:)`), or
    /// at the target itself with the `.flat` layout, then records it in the target's `courses.json`.
    public func publish() async throws(PublishError) -> PublishReport {
        let started = Date()
        let published = try readLocalPublish()
        let local = published.manifest
        let prefix = options.layout == .flat ? "" : CourseFolder.name(for: local.courseID)
        let course = prefix.isEmpty ? self : Publisher(folder: folder, store: PrefixedStore(inner: store, prefix: prefix), options: options)
        var report = try await course.publishCourse(published)
        report.target = store.location
        report.courseID = local.courseID
        report.coursePrefix = prefix
        report.manifest = course.store.location + "/" + (published.hasWholeFile ? PublishedManifest.wholeFileName : ManifestIndex.fileName)
        if !prefix.isEmpty, let warning = await flatCopyWarning(of: local) { report.warnings.append(warning) }
        if !options.dryRun { try await updateIndex(local, prefix: prefix, report: &report) }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// The publish itself, with `store` being the course's own place.
    private func publishCourse(_ published: PublishedManifest) async throws(PublishError) -> PublishReport {
        var report = PublishReport(target: store.location, dryRun: options.dryRun)
        let local = published.manifest
        let files = try localFiles(of: local) + Self.localParts(of: published)
        let (remote, record) = try await readTarget(publishing: local)
        let named = Set(files.map(\.key))
        let live = Set(
            Self.archives(of: remote?.manifest).filter(PublishKeys.isArchiveKey) + Self.contents(of: remote?.manifest).filter(PublishKeys.isContentKey)
                + Self.parts(of: remote).filter(PublishKeys.isPartKey))
        let uploads = try await plannedUploads(files, live: live, report: &report)
        try checkLocalBytes(of: uploads)
        report.uploads = uploads.map { .init(key: $0.file.key, bytes: $0.file.size, reason: $0.reason, stagedAs: $0.staged) }
        let manifestChanged = Self.topFilesChanged(published, remote: remote)
        let interimParts = Self.interimParts(of: published, staged: Self.stagedKeys(uploads))
        let next = nextRecord(after: record, named: named, live: live, uploads: uploads, interim: interimParts.map(\.reference.path))

        if options.dryRun {
            dryRun(next, live: live, report: &report)
            report.manifestUploaded = manifestChanged || !uploads.isEmpty
        } else {
            var changed = false
            do {
                if next != record {
                    try await putRecord(next, report: &report)
                    changed = true
                }
                changed = try await upload(uploads, of: published, remote: remote, interimParts: interimParts, report: &report) || changed
                // 3. The manifest, last.
                let staged = uploads.contains(where: { $0.staged != nil })
                if manifestChanged || staged {
                    try await putTopFiles(of: local, local: published, remote: remote, force: staged, report: &report)
                    if !staged { try await deleteStaleTopFile(local: published, remote: remote, report: &report) }
                    changed = true
                }
                try await startGracePeriods(
                    next, live: live, named: named, uploads: uploads, interim: interimParts.map(\.reference.path), report: &report)
            } catch {
                throw .store(error, changedTarget: changed)
            }
        }
        return report
    }

    /// The target's manifest and publish record, as they are before this publish.
    private func readTarget(publishing local: CourseManifest) async throws(PublishError) -> (PublishedManifest?, PublishRecord) {
        let record: PublishRecord
        do {
            record = PublishRecord.decode(try await store.get(PublishRecord.key))
        } catch {
            throw .store(error, changedTarget: false)
        }
        guard let remote = try await readRemotePublish() else { return (nil, record) }
        guard remote.manifest.courseID == local.courseID else {
            let file = remote.hasWholeFile ? PublishedManifest.wholeFileName : ManifestIndex.fileName
            throw .otherCourse(manifest: "\(store.location)/\(file)", found: remote.manifest.courseID, publishing: local.courseID)
        }
        return (remote, record)
    }

    /// What has to go up: decided by the size and stored sha256 of every object, never its
    /// mere existence.
    private func plannedUploads(_ files: [LocalFile], live: Set<String>, report: inout PublishReport) async throws(PublishError) -> [Upload] {
        let found: [(LocalFile, StoredObject?)]
        do {
            found = try await forEach(files) { file throws(StoreError) in (file, try await store.head(file.key)) }
        } catch {
            throw .store(error, changedTarget: false)
        }
        var uploads: [Upload] = []
        for (file, object) in found {
            if let object, object.size == file.size, object.sha256 == file.sha256 {
                report.unchanged += 1
                continue
            }
            // Overwriting an archive the live manifest names would make it name other bytes. A
            // content's (or a part's) name is its bytes: one found different is damaged, and
            // replaced in place.
            let inPlace = PublishKeys.isContentKey(file.key) || PublishKeys.isPartKey(file.key)
            let staged = live.contains(file.key) && object != nil && !inPlace
                ? PublishKeys.staged(file.key, sha256: file.sha256) : nil
            uploads.append(Upload(file: file, staged: staged, reason: object == nil ? "new" : "changed"))
        }
        return uploads
    }

    /// What goes up must be what the manifest describes: checked before anything is written.
    private func checkLocalBytes(of uploads: [Upload]) throws(PublishError) {
        for upload in uploads {
            do {
                _ = try openVerified(upload.file)
            } catch {
                throw .local(path: error.path, reason: error.reason)
            }
        }
    }

    /// `file` opened through `LocalFolder` (no link followed), with the size and sha256 the
    /// manifest gives: checked when planning, and again on the descriptor that is uploaded, so a
    /// link or other bytes swapped in between are refused.
    private func openVerified(_ file: LocalFile) throws(LocalFileRefusal) -> OpenedFile {
        let opened = try LocalFolder(root: folder).open(file.key)
        let digest: (sha256: String, size: UInt64)
        do {
            digest = try opened.sha256()
        } catch {
            throw LocalFileRefusal(path: error.path, reason: "\(error.operation) failed: \(String(cString: strerror(error.errno)))")
        }
        guard digest.size == file.size else {
            throw LocalFileRefusal(path: opened.path, reason: "is \(digest.size) bytes, the manifest says \(file.size) (run coursepack verify)")
        }
        guard digest.sha256 == file.sha256 else {
            throw LocalFileRefusal(path: opened.path, reason: "sha256 is \(digest.sha256), the manifest says \(file.sha256) (run coursepack verify)")
        }
        return opened
    }

    /// Opens `file` for its upload; a refusal now means the folder changed after planning.
    private func openForUpload(_ file: LocalFile) throws(StoreError) -> OpenedFile {
        do {
            return try openVerified(file)
        } catch {
            throw .file(path: error.path, reason: "\(error.reason); it changed after the publish was planned, and was not uploaded")
        }
    }

    /// The record written before anything else: what the live manifest stops naming starts its
    /// grace period, and everything the new manifest names that the live one does not, uploaded
    /// now or already there (even an archive taken back from `removed`), is pending: if this
    /// publish dies before its manifest, the next one finds them here and schedules their deletion.
    private func nextRecord(
        after record: PublishRecord, named: Set<String>, live: Set<String>, uploads: [Upload], interim: [String]
    ) -> PublishRecord {
        var next = record
        next.removed = next.removed.filter { !named.contains($0.key) }
        let stamp = Self.timestamp(options.now())
        for key in live.subtracting(named) { next.removed[key] = stamp }
        let orphans = Set(next.pending).subtracting(named).subtracting(live)
        for key in orphans where next.removed[key] == nil { next.removed[key] = stamp }
        next.pending = Array(named.subtracting(live).union(uploads.compactMap { $0.staged }).union(interim)).sorted()
        return next
    }

    /// What a real publish would delete now and what it would schedule.
    private func dryRun(_ next: PublishRecord, live: Set<String>, report: inout PublishReport) {
        let now = options.now()
        for (key, since) in next.removed.sorted(by: { $0.key < $1.key }) {
            let deleteAfter = (Self.date(since) ?? now).addingTimeInterval(options.keepRemoved)
            if deleteAfter <= now, !live.contains(key) {
                report.deleted.append(key)
            } else {
                report.scheduledDeletions.append(.init(key: key, deleteAfter: Self.timestamp(deleteAfter)))
            }
        }
    }

    /// 1. Archives: new ones at their names, changed ones beside the ones in use. 2. For those,
    /// a manifest naming the staged copies, then the copies under their own names. Returns
    /// whether anything was written.
    private func upload(
        _ uploads: [Upload], of published: PublishedManifest, remote: PublishedManifest?,
        interimParts: [(reference: PartReference, bytes: [UInt8])], report: inout PublishReport
    ) async throws(StoreError) -> Bool {
        // Contents before the archives assembled from them, then the manifest's parts, the
        // manifest last: a reader that sees a name finds everything it leads to.
        let contents = uploads.filter { PublishKeys.isContentKey($0.file.key) }
        let parts = uploads.filter { PublishKeys.isPartKey($0.file.key) }
        let archives = uploads.filter { !PublishKeys.isContentKey($0.file.key) && !PublishKeys.isPartKey($0.file.key) }
        var first: [String] = []
        for batch in [contents, archives, parts] {
            first += try await forEach(batch) { upload throws(StoreError) in
                let key = upload.staged ?? upload.file.key
                try await store.put(key, file: try openForUpload(upload.file), metadata: archiveMetadata(upload.file))
                return "PUT \(key)"
            }
        }
        report.writes += first
        let staged = uploads.filter { $0.staged != nil }
        if !staged.isEmpty {
            let interim = Self.pointing(published.manifest, staged: Self.stagedKeys(uploads))
            try await putParts(interimParts, report: &report)
            try await putTopFiles(of: interim, local: published, remote: remote, force: true, report: &report)
            try await deleteStaleTopFile(local: published, remote: remote, report: &report)
            report.writes += try await forEach(staged) { upload throws(StoreError) in
                guard let source = upload.staged, upload.file.size <= S3Store.largestCopy else {
                    try await store.put(upload.file.key, file: try openForUpload(upload.file), metadata: archiveMetadata(upload.file))
                    return "PUT \(upload.file.key)"
                }
                // The bytes are there already: the target copies them, nothing goes up twice.
                try await store.copy(source, to: upload.file.key, metadata: archiveMetadata(upload.file))
                return "COPY \(source) \(upload.file.key)"
            }
        }
        report.bytesUploaded = uploads.reduce(0) { $0 + $1.file.size + ($1.staged != nil && $1.file.size > S3Store.largestCopy ? $1.file.size : 0) }
        return !first.isEmpty
    }

    /// 4. The grace period of what the new manifest stopped naming starts now; what has waited
    /// long enough is deleted.
    private func startGracePeriods(
        _ next: PublishRecord, live: Set<String>, named: Set<String>, uploads: [Upload], interim: [String], report: inout PublishReport
    ) async throws(StoreError) {
        var after = next
        let replaced = Self.timestamp(options.now())
        for key in live.subtracting(named).union(interim) { after.removed[key] = replaced }
        for upload in uploads { if let key = upload.staged { after.removed[key] = replaced } }
        after.pending = []
        let now = options.now()
        let due = after.removed.filter { (Self.date($0.value) ?? now).addingTimeInterval(options.keepRemoved) <= now }.keys.sorted()
        if after != next { try await putRecord(after, report: &report) }
        if !due.isEmpty {
            for key in due {
                try await store.delete(key)
                report.writes.append("DELETE \(key)")
                report.deleted.append(key)
                after.removed[key] = nil
            }
            try await putRecord(after, report: &report)
        }
        report.scheduledDeletions = after.removed.sorted(by: { $0.key < $1.key }).map {
            .init(key: $0.key, deleteAfter: Self.timestamp((Self.date($0.value) ?? now).addingTimeInterval(options.keepRemoved)))
        }
    }

    // MARK: Steps

    func putManifest(_ data: Data, key: String, report: inout PublishReport) async throws(StoreError) {
        let metadata = ObjectMetadata(
            contentType: "application/json", cacheControl: options.cacheControlManifest, size: UInt64(data.count), sha256: SHA256Hex.of(data))
        try await store.put(key, data: data, metadata: metadata)
        report.writes.append("PUT \(key)")
        report.manifestUploaded = true
    }

    private func putRecord(_ record: PublishRecord, report: inout PublishReport) async throws(StoreError) {
        let data = record.encoded()
        let metadata = ObjectMetadata(contentType: "application/json", cacheControl: "no-store", size: UInt64(data.count), sha256: SHA256Hex.of(data))
        try await store.put(PublishRecord.key, data: data, metadata: metadata)
        report.writes.append("PUT \(PublishRecord.key)")
    }

    private func archiveMetadata(_ file: LocalFile) -> ObjectMetadata {
        let type = file.key.hasSuffix(".zip") ? "application/zip" : file.key.hasSuffix(".gz") ? "application/gzip" : "application/octet-stream"
        return ObjectMetadata(contentType: type, cacheControl: options.cacheControlArchives, size: file.size, sha256: file.sha256)
    }

    /// A per-course publish to a target whose root holds a flat publish of the same course:
    /// clients pointed at the root keep getting that older copy.
    private func flatCopyWarning(of local: CourseManifest) async -> String? {
        guard let data = try? await store.get("manifest.json"),
            let root = try? ManifestFile.decode(data, path: store.location + "/manifest.json"), root.courseID == local.courseID
        else { return nil }
        return "\(store.location)/manifest.json is an earlier flat publish of \(local.courseID): clients pointed there do not get this publish (publish with --flat to keep updating it there)"
    }

    /// Adds or updates this course in the target's `courses.json`, after its manifest is in
    /// place; every other course's entry is kept as it is.
    private func updateIndex(_ local: CourseManifest, prefix: String, report: inout PublishReport) async throws(PublishError) {
        let entry = CourseIndex.Entry(prefix: prefix, manifest: prefix.isEmpty ? "manifest.json" : prefix + "/manifest.json", publishedAt: local.publishedAt)
        do {
            guard var index = CourseIndex.decode(try await store.get(CourseIndex.key)) else {
                report.warnings.append("\(store.location)/\(CourseIndex.key) is not a coursepack course index: left as it is")
                return
            }
            report.index = store.location + "/" + CourseIndex.key
            guard index.courses[local.courseID] != entry else { return }
            index.courses[local.courseID] = entry
            let data = index.encoded()
            let metadata = ObjectMetadata(
                contentType: "application/json", cacheControl: options.cacheControlManifest, size: UInt64(data.count), sha256: SHA256Hex.of(data))
            try await store.put(CourseIndex.key, data: data, metadata: metadata)
            report.writes.append("PUT \(CourseIndex.key)")
        } catch {
            throw .store(error, changedTarget: true)
        }
    }

    /// Every archive the local manifest names, checked against it: a folder that does not match
    /// its manifest is never published.
    private func localFiles(of manifest: CourseManifest) throws(PublishError) -> [LocalFile] {
        var files: [LocalFile] = []
        var seen = Set<String>()
        var entries = manifest.blocks.compactMap { block in block.archive.map { ($0, block.size, block.sha256) } }
        if let runtime = manifest.runtime { entries.append((runtime.archive, runtime.size, runtime.sha256)) }
        if let search = manifest.search { entries.append((search.archive, search.size, search.sha256)) }
        let source = LocalFolder(root: folder)
        for (key, size, sha256) in entries where seen.insert(key).inserted {
            // Exactly `type/name.zip`: an archive key can never reach another course's folder,
            // the manifest, the record or the index.
            guard ArchivePath.isWellFormed(key), let size, let sha256 else {
                throw .local(path: folder + "/manifest.json", reason: "\(key): not a publishable archive entry (not type/name.zip, or no size or sha256)")
            }
            let opened: OpenedFile
            do {
                opened = try source.open(key)
            } catch {
                throw .local(path: error.path, reason: error.reason)
            }
            guard opened.size == size else {
                throw .local(path: opened.path, reason: "is \(opened.size) bytes, the manifest says \(size) (run coursepack verify)")
            }
            files.append(LocalFile(key: key, size: size, sha256: sha256))
        }
        return try files + localContents(of: manifest, in: source)
    }

    /// Every course file the local manifest lists, at the path its key derives, of its size;
    /// its `sha256` here is of the published file's bytes (what the target stores and compares).
    private func localContents(of manifest: CourseManifest, in source: LocalFolder) throws(PublishError) -> [LocalFile] {
        var files: [LocalFile] = []
        for (sha256, content) in (manifest.files ?? [:]).sorted(by: { $0.key < $1.key }) {
            let key = content.path(sha256: sha256)
            guard CourseFile.isContentKey(sha256), PublishKeys.isContentKey(key) else {
                throw .local(path: folder + "/manifest.json", reason: "\(sha256): not a SHA-256 content key")
            }
            let digest: (sha256: String, size: UInt64)
            do {
                digest = try source.open(key).sha256()
            } catch let error as LocalFileRefusal {
                throw .local(path: error.path, reason: error.reason)
            } catch {
                throw .local(path: folder + "/" + key, reason: "\(error)")
            }
            guard digest.size == content.compressedSize else {
                throw .local(path: folder + "/" + key, reason: "is \(digest.size) bytes, the manifest says \(content.compressedSize) (run coursepack verify)")
            }
            files.append(LocalFile(key: key, size: content.compressedSize, sha256: digest.sha256))
        }
        return files
    }

    /// Runs `body` on every element with at most `options.jobs` at once; results in completion order.
    private func forEach<Element: Sendable, Result: Sendable>(
        _ elements: [Element], _ body: @escaping @Sendable (Element) async throws(StoreError) -> Result
    ) async throws(StoreError) -> [Result] {
        do {
            return try await withThrowingTaskGroup(of: Result.self) { group in
                var results: [Result] = []
                var iterator = elements.makeIterator()
                for _ in 0..<options.jobs {
                    guard let element = iterator.next() else { break }
                    group.addTask { try await body(element) }
                }
                while let result = try await group.next() {
                    results.append(result)
                    if let element = iterator.next() { group.addTask { try await body(element) } }
                }
                return results
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unreachable(location: store.location, operation: "publish", reason: "\(error)")
        }
    }

    // MARK: Helpers

    static func archives(of manifest: CourseManifest?) -> [String] {
        guard let manifest else { return [] }
        return manifest.blocks.compactMap(\.archive) + [manifest.runtime?.archive, manifest.search?.archive].compactMap { $0 }
    }

    /// The published course files a manifest names.
    static func contents(of manifest: CourseManifest?) -> [String] {
        (manifest?.files ?? [:]).map { $0.value.path(sha256: $0.key) }
    }

    /// Each changed archive's key, to its staged copy's.
    static func stagedKeys(_ uploads: [Upload]) -> [String: String] {
        Dictionary(uploads.compactMap { upload in upload.staged.map { (upload.file.key, $0) } }, uniquingKeysWith: { first, _ in first })
    }

    static func pointing(_ manifest: CourseManifest, staged: [String: String]) -> CourseManifest {
        var copy = manifest
        for index in copy.blocks.indices {
            guard let archive = copy.blocks[index].archive, let path = staged[archive] else { continue }
            copy.blocks[index].moveArchive(to: path)
        }
        if let archive = copy.runtime?.archive, let path = staged[archive] { copy.runtime?.archive = path }
        if let archive = copy.search?.archive, let path = staged[archive] { copy.search?.archive = path }
        return copy
    }

    static func timestamp(_ date: Date) -> String {
        // Whole milliseconds, rounded down: the formatter rounds to the nearest, which could
        // record a time later than the moment itself and postpone a due deletion.
        let date = Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
