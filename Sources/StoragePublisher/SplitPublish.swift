import FileSystem
import Foundation
import Manifest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The split manifest on both sides of a publish: the built folder's and the target's, read as
/// every other local reader reads them (`PublishedManifest`), and the order in which its files
/// go up: parts with the archives (before anything names them), `manifest.json`, the index last.
extension Publisher {
    /// The built folder's publish, read through `LocalFolder`: no link is followed.
    func readLocalPublish() throws(PublishError) -> PublishedManifest {
        let source = LocalFolder(root: folder)
        let read: PublishedManifest?
        do {
            read = try PublishedManifest.read(at: folder) { relative throws(ManifestError) in try Self.localBytes(relative, in: source) }
        } catch {
            throw .local(path: folder, reason: "\(error)")
        }
        guard let read else {
            throw .local(
                path: folder + "/" + PublishedManifest.wholeFileName,
                reason: "no \(PublishedManifest.wholeFileName) or \(ManifestIndex.fileName): not a published folder (run coursepack build first)")
        }
        try Self.refuseWhatClientsRefuse(read, in: folder)
        return read
    }

    /// A folder whose manifest every client refuses is not published: it would replace a
    /// publish clients take with one none does. The builder never writes one (CP332); a folder
    /// built by hand, by an older coursepack or under other limits may hold one.
    static func refuseWhatClientsRefuse(_ published: PublishedManifest, in folder: String) throws(PublishError) {
        let limits = ManifestLimits.current
        var refusals: [ManifestRefusal] = []
        if let index = published.index, let bytes = published.indexBytes {
            refusals = index.clientRefusals(indexSize: bytes.count, limits: limits)
        }
        var info = stat()
        if published.hasWholeFile, lstat(folder + "/" + PublishedManifest.wholeFileName, &info) == 0, Int(info.st_size) > limits.maximumFileSize {
            refusals.append(ManifestRefusal(
                file: PublishedManifest.wholeFileName, message: "is \(info.st_size) bytes, more than the \(limits.maximumFileSize) a client accepts"))
        }
        guard let first = refusals.first else { return }
        let all = refusals.map { "\($0.file) \($0.message)" }.joined(separator: "; ")
        throw .local(path: folder + "/" + first.file, reason: "\(all): every client would refuse this publish, so nothing was published (run coursepack verify)")
    }

    /// The bytes of `relative` in the built folder; nil when there is no such file.
    static func localBytes(_ relative: String, in source: LocalFolder) throws(ManifestError) -> [UInt8]? {
        var info = stat()
        if lstat(source.root + "/" + relative, &info) != 0, errno == ENOENT { return nil }
        do {
            return try source.open(relative).readAll()
        } catch let error as LocalFileRefusal {
            throw .unreadable(path: error.path, reason: error.reason)
        } catch {
            throw .unreadable(path: source.root + "/" + relative, reason: "\(error)")
        }
    }

    /// The target's publish: its `manifest.json`, else its index with the parts it names. A
    /// part the built folder holds with the same name is read there (the name is the hash of
    /// the bytes, checked either way): only parts this build no longer has are downloaded.
    func readRemotePublish() async throws(PublishError) -> PublishedManifest? {
        let source = LocalFolder(root: folder)
        var fetched: [String: [UInt8]] = [:]
        do {
            for key in [PublishedManifest.wholeFileName, ManifestIndex.fileName] {
                if let data = try await store.get(key) { fetched[key] = [UInt8](data) }
            }
            if fetched[PublishedManifest.wholeFileName] == nil, let bytes = fetched[ManifestIndex.fileName],
                let index = try? ManifestFile.decodeIndex(bytes, path: ManifestIndex.fileName)
            {
                for reference in index.parts where CourseFile.isContentKey(reference.sha256) {
                    if let bytes = try? Self.localBytes(reference.path, in: source), ManifestSplit.verify(bytes, as: reference) {
                        fetched[reference.path] = bytes
                    } else if let data = try await store.get(reference.path) {
                        fetched[reference.path] = [UInt8](data)
                    }
                }
            }
        } catch {
            throw .store(error, changedTarget: false)
        }
        do {
            return try PublishedManifest.read(at: store.location) { relative throws(ManifestError) in fetched[relative] }
        } catch {
            throw .remoteManifest(error)
        }
    }

    /// Every part the local index names, checked as it was read: its name is its hash.
    static func localParts(of local: PublishedManifest) -> [LocalFile] {
        (local.index?.parts ?? []).map { LocalFile(key: $0.path, size: $0.size, sha256: $0.sha256) }
    }

    /// The parts of the manifest naming staged copies that the final one does not name: they go
    /// up before it, and start their grace period once the final index is in place.
    static func interimParts(of local: PublishedManifest, staged: [String: String]) -> [(reference: PartReference, bytes: [UInt8])] {
        guard !staged.isEmpty, let index = local.index else { return [] }
        let named = Set(index.parts.map(\.sha256))
        return ManifestSplit.split(pointing(local.manifest, staged: staged)).parts.filter { !named.contains($0.reference.sha256) }
    }

    /// Whether `manifest.json` or the index differ from the target's (or are missing there), or
    /// the target holds a `manifest.json` or an index this publish no longer has.
    static func topFilesChanged(_ local: PublishedManifest, remote: PublishedManifest?) -> Bool {
        if local.hasWholeFile, remote?.hasWholeFile != true || remote.map({ ManifestFile.encode($0.manifest) }) != ManifestFile.encode(local.manifest) {
            return true
        }
        if let indexBytes = local.indexBytes, remote?.indexBytes != indexBytes { return true }
        return staleWholeFile(local: local, remote: remote) || staleIndex(local: local, remote: remote)
    }

    /// The target holds a `manifest.json` and this publish has none (the course outgrew it).
    static func staleWholeFile(local: PublishedManifest, remote: PublishedManifest?) -> Bool {
        !local.hasWholeFile && remote?.hasWholeFile == true
    }

    /// The target holds an index and this publish has none (a folder built before the split
    /// manifest, or with its split form removed): clients read the index first, so left in
    /// place it would keep serving the earlier publish, and name parts that are going away.
    static func staleIndex(local: PublishedManifest, remote: PublishedManifest?) -> Bool {
        local.index == nil && remote?.indexBytes != nil
    }

    /// 3. `manifest.json` while the build wrote one, then the index, last, each when it differs
    /// from the target's (`force`: always, after staged copies). `manifest` is the local one, or
    /// the interim naming staged copies. A top file this publish does not have goes after
    /// (`deleteStaleTopFile`).
    func putTopFiles(
        of manifest: CourseManifest, local: PublishedManifest, remote: PublishedManifest?, force: Bool, report: inout PublishReport
    ) async throws(StoreError) {
        if local.hasWholeFile {
            let data = ManifestFile.encode(manifest)
            if force || remote?.hasWholeFile != true || remote.map({ ManifestFile.encode($0.manifest) }) != data {
                try await putManifest(data, key: PublishedManifest.wholeFileName, report: &report)
            }
        }
        if local.index != nil {
            let bytes = manifest == local.manifest ? local.indexBytes ?? [] : ManifestFile.encode(ManifestSplit.split(manifest).index)
            if force || remote?.indexBytes != bytes { try await putManifest(Data(bytes), key: ManifestIndex.fileName, report: &report) }
        }
    }

    /// The top file the target holds and this publish does not, deleted once the one that
    /// replaces it is in place, so both always describe the same publish: a `manifest.json`
    /// (the course outgrew it) after the new index; an index (this publish has none) after the
    /// new `manifest.json`. Only after this may the parts that index named be deleted
    /// (`startGracePeriods`): the target never holds an index naming a missing part.
    func deleteStaleTopFile(local: PublishedManifest, remote: PublishedManifest?, report: inout PublishReport) async throws(StoreError) {
        let key: String
        if Self.staleWholeFile(local: local, remote: remote) {
            key = PublishedManifest.wholeFileName
        } else if Self.staleIndex(local: local, remote: remote) {
            key = ManifestIndex.fileName
        } else {
            return
        }
        try await store.delete(key)
        report.writes.append("DELETE \(key)")
        report.manifestUploaded = true
    }

    /// The interim's own parts, before the interim index names them.
    func putParts(_ parts: [(reference: PartReference, bytes: [UInt8])], report: inout PublishReport) async throws(StoreError) {
        for part in parts {
            let metadata = ObjectMetadata(
                contentType: "application/json", cacheControl: options.cacheControlArchives, size: part.reference.size, sha256: part.reference.sha256)
            try await store.put(part.reference.path, data: Data(part.bytes), metadata: metadata)
            report.writes.append("PUT \(part.reference.path)")
        }
    }

    /// The parts an index names, as keys.
    static func parts(of published: PublishedManifest?) -> [String] {
        (published?.index?.parts ?? []).map(\.path)
    }
}
