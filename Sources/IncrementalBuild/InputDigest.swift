import Crypto
import FileSystem

/// SHA-256 over a sequence of fields, each prefixed by its length, so that no two different
/// sequences of fields can feed the hash the same bytes.
public struct InputDigest {
    private var hasher = SHA256()

    public init(_ purpose: String) {
        add(purpose)
    }

    public mutating func add(_ text: String) {
        add(bytes: Array(text.utf8))
    }

    public mutating func add(bytes: some Collection<UInt8>) {
        var length = UInt64(bytes.count).littleEndian
        withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
        if let done = bytes.withContiguousStorageIfAvailable({ hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }) {
            return done
        }
        hasher.update(data: Array(bytes))
    }

    public func finish() -> String {
        SHA256Hex.hex(hasher.finalize())
    }
}
