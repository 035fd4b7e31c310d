import FileSystem
import Foundation

/// A store seen from inside one of its folders: every key gets `prefix/` in front.
struct PrefixedStore: ObjectStore {
    let inner: any ObjectStore
    let prefix: String

    var location: String { inner.location + "/" + prefix }

    private func full(_ key: String) -> String { prefix + "/" + key }

    func head(_ key: String) async throws(StoreError) -> StoredObject? { try await inner.head(full(key)) }
    func get(_ key: String) async throws(StoreError) -> Data? { try await inner.get(full(key)) }
    func put(_ key: String, file: OpenedFile, metadata: ObjectMetadata) async throws(StoreError) {
        try await inner.put(full(key), file: file, metadata: metadata)
    }
    func put(_ key: String, data: Data, metadata: ObjectMetadata) async throws(StoreError) {
        try await inner.put(full(key), data: data, metadata: metadata)
    }
    func copy(_ source: String, to key: String, metadata: ObjectMetadata) async throws(StoreError) {
        try await inner.copy(full(source), to: full(key), metadata: metadata)
    }
    func delete(_ key: String) async throws(StoreError) { try await inner.delete(full(key)) }
}
