import FileSystem
import Foundation
import SyncClient

extension ClientTarget {
    /// A plain sync of a course the last sync left whole (`SettledSync`), when the server's
    /// manifest bytes are still the ones it installed and the target is intact: nothing to do,
    /// found out from one small request and a look at each installed folder, without parsing,
    /// planning or rewriting manifests and pages. Otherwise the server's manifest as fetched
    /// (nil when no look-up was possible), for the full sync, with the record of the course's
    /// folder when it was found intact: the sync then checks it again under its own lock
    /// (`intactCourse`) instead of reading every installed folder's inventory.
    enum SettledProbe {
        case settled(SyncReport)
        case changed(FetchedManifest?, intact: (folder: String, record: SettledSync)? = nil)
    }

    func probeSettled(_ request: SyncRequest, targetKind: Kind, started: Date) async throws(ClientError) -> SettledProbe {
        guard targetKind == .multiCourse, let known = try readStateOutline(),
            let folder = settledCandidate(request, known: known)
        else { return .changed(nil) }
        let courseRoot = root + "/" + folder
        // Under the lock: a sync running now is not taken for a finished one.
        let lock = try ClientTarget.lock(stateFolder + "/lock", waiting: .none)
        let courseLock = try ClientTarget.lock(SyncClient.stateFolder(of: courseRoot) + "/lock", waiting: .none)
        defer { withExtendedLifetime((lock, courseLock)) {} }
        guard let settled = SettledSync.read(target: courseRoot), settled.isIntact(target: courseRoot, store: contentStore.folder) else { return .changed(nil) }
        let client = SyncClient(options: .init(source: request.source, target: courseRoot, timeouts: request.timeouts))
        let fetched: FetchedManifest?
        do {
            fetched = try await client.fetchManifest(unlessFingerprint: settled.fingerprint)
        } catch {
            throw .sync(error)
        }
        if let fetched { return .changed(fetched, intact: (folder, settled)) }
        var report = SyncReport()
        report.courseFolder = folder
        report.summary = .settled(blocks: settled.blocks, seconds: Date().timeIntervalSince(started))
        return .settled(report)
    }

    /// The course folder the probe found intact, when it still is, checked under the sync's
    /// lock: nothing changed in it since the last sync left it whole and checked each of its
    /// folders against their inventories, so reconciliation has nothing to repair there.
    func intactCourse(_ probe: SettledProbe, folder: String) -> String? {
        guard case .changed(_, let intact?) = probe, intact.folder == folder,
            intact.record.isIntact(target: root + "/" + folder, store: contentStore.folder)
        else { return nil }
        return folder
    }

    /// The course folder a plain request syncs, when nothing but the server's manifest could
    /// give the sync something to do: no selection, pin, prefetch or setting changed, no
    /// budget (what other courses took may have changed since), no block due to expire,
    /// nothing at the target's root but its courses, no temporary file of a killed writer.
    private func settledCandidate(_ request: SyncRequest, known: StateOutline) -> String? {
        guard request.selection.isEmpty, request.pin.isEmpty, request.unpin.isEmpty, request.next == nil,
            request.budget == nil, request.expireAfter == nil, known.budget == nil,
            let folder = known.courses.first(where: { $0.value.source == request.source.description })?.key
        else { return nil }
        if let expireAfter = known.expireAfter {
            // Only then is the last use of every block needed: it is most of the state.
            guard let full = try? readState() else { return nil }
            let now = request.now().timeIntervalSince1970
            guard !full.courses.values.contains(where: { $0.lastUse.values.contains { now - $0 > expireAfter } }) else { return nil }
        }
        let fm = FileManager.default
        let atRoot: Set<String> = [Self.stateFolderName, "index.html"]
        guard ((try? fm.contentsOfDirectory(atPath: root)) ?? []).allSatisfy({ atRoot.contains($0) || known.courses[$0] != nil }),
            !((try? fm.contentsOfDirectory(atPath: stateFolder)) ?? []).contains(where: { SyncLeftovers.temporaryPID($0) != nil })
        else { return nil }
        return folder
    }

    /// What `settledCandidate` needs of the target's state, read without the last use of
    /// every block (most of the state at 100,000 blocks, and a third of a no-op sync's time).
    struct StateOutline: Decodable {
        struct Course: Decodable {
            var source: String
        }
        var budget: UInt64?
        var expireAfter: Double?
        var courses: [String: Course] = [:]

        enum CodingKeys: String, CodingKey {
            case budget, courses
            case expireAfter = "expire_after"
        }
    }

    /// Nil when there is no state.
    func readStateOutline() throws(ClientError) -> StateOutline? {
        let bytes: [UInt8]
        do {
            guard let read = try WholeFile.read(statePath, atMost: WholeFile.stateLimit) else { return nil }
            bytes = read
        } catch {
            throw .notATarget(path: statePath, reason: "cannot be read: \(error.reason ?? "\(error)")")
        }
        do {
            return try JSONDecoder().decode(StateOutline.self, from: Data(bytes))
        } catch {
            throw .notATarget(path: statePath, reason: "cannot be read: \(error)")
        }
    }
}
