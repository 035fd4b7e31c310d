import Foundation

/// What a publish needs of the place clients download from: an S3 bucket or a local folder.
/// Keys are relative to the target (`manifest.json`, `html/x.zip`); the store adds its prefix.
public protocol ObjectStore: Sendable {
    /// Where this store writes, for messages (`s3://bucket/prefix`, a folder path).
    var location: String { get }
    /// Size and stored sha256 of the object at `key`; nil when there is none.
    func head(_ key: String) async throws(StoreError) -> StoredObject?
    /// The object's bytes, nil when there is none. For small objects (manifest, record).
    func get(_ key: String) async throws(StoreError) -> Data?
    /// Puts `file` (streamed from disk, from the descriptor opened, never by its name again) at `key`.
    func put(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError)
    func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError)
    /// Puts a copy of the object at `source` at `key`, on the target's side (no upload).
    func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError)
    /// Removes `key`; removing what is not there is no error.
    func delete(_ key: String) async throws(StoreError)
}

public struct StoredObject: Sendable, Equatable {
    public var size: UInt64
    /// The sha256 recorded with the object (S3: `x-amz-meta-sha256` metadata), or computed (folder).
    public var sha256: String?

    public init(size: UInt64, sha256: String?) {
        self.size = size
        self.sha256 = sha256
    }
}

public struct ObjectMetadata: Sendable, Equatable {
    public var contentType: String
    public var cacheControl: String
    public var size: UInt64
    public var sha256: String

    public init(contentType: String, cacheControl: String, size: UInt64, sha256: String) {
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.size = size
        self.sha256 = sha256
    }
}

