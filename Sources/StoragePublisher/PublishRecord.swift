import Foundation
import Manifest

/// `.coursepack-publish.json`, beside the manifest: what a later publish must still delete.
/// `removed` maps each archive no published manifest names any more to the time the manifest
/// that stopped naming it went in (the grace period runs from there); `pending` lists what a
/// manifest not in place yet names and the live one does not (uploaded for it, or already
/// there), so a publish killed before its manifest leaves nothing no later publish cleans up.
public struct PublishRecord: Codable, Sendable, Equatable {
    public static let key = ".coursepack-publish.json"

    public var version = 1
    public var removed: [String: String] = [:]
    public var pending: [String] = []

    public init(removed: [String: String] = [:], pending: [String] = []) {
        self.removed = removed
        self.pending = pending
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// A record that cannot be read is treated as empty: it only ever delays deletions.
    static func decode(_ data: Data?) -> PublishRecord {
        guard let data, let record = try? JSONDecoder().decode(PublishRecord.self, from: data) else { return PublishRecord() }
        return PublishRecord(removed: record.removed.filter { PublishKeys.isPublishedKey($0.key) }, pending: record.pending.filter(PublishKeys.isPublishedKey))
    }
}

enum PublishKeys {
    /// Relative, no `.`/`..`/empty segments, not one of the files a publish itself manages.
    static func isSafe(_ key: String) -> Bool {
        guard !key.isEmpty, !key.hasPrefix("/"), key != "manifest.json", key != ManifestIndex.fileName, key != PublishRecord.key else { return false }
        return key.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\\") }
    }

    /// What a publish may write or delete for a course: an archive (`type/name.zip`) or a
    /// staged copy of one. Nothing else a manifest or a record names is ever touched, so a
    /// damaged or foreign record cannot reach another course's folder, a manifest or the index.
    static func isArchiveKey(_ key: String) -> Bool {
        ArchivePath.isWellFormed(key) || ArchivePath.original(ofStaged: key) != nil
    }

    /// A published course file, `files/<hh>/<sha256>` or `files/<hh>/<sha256>.gz`, exactly as
    /// `CourseFile.path` derives it: a content key can never reach anything else either.
    static func isContentKey(_ key: String) -> Bool {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Substring(CourseFile.folder) else { return false }
        let name = parts[2].hasSuffix(".gz") ? parts[2].dropLast(3) : parts[2]
        return CourseFile.isContentKey(String(name)) && parts[1] == name.prefix(2)
    }

    /// A part of the split manifest, `manifest/<sha256>.json`, exactly as `PartReference.path`
    /// derives it.
    static func isPartKey(_ key: String) -> Bool {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == Substring(ManifestPart.folder), parts[1].hasSuffix(".json") else { return false }
        return CourseFile.isContentKey(String(parts[1].dropLast(5)))
    }

    /// What a publish may write or delete for a course: an archive, a staged copy, a content,
    /// or a part of the split manifest.
    static func isPublishedKey(_ key: String) -> Bool { isArchiveKey(key) || isContentKey(key) || isPartKey(key) }

    /// `html/.x.zip.staged-0123abcd…`: where a changed archive goes up first, beside the one the
    /// live manifest names (the same naming as a local build's staging).
    static func staged(_ key: String, sha256: String) -> String {
        ArchivePath.staged(key, contentHash: sha256)
    }
}
