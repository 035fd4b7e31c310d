import Crypto
import FileSystem

/// SHA-256 over a sequence of fields, each prefixed by its length, so that no two different
/// sequences of fields can feed the hash the same bytes.
public struct InputDigest {
    private var hasher = SHA256()
    /// Fields are mostly a few bytes (a name, an attribute): gathered here and hashed a
    /// kilobyte at a time, since each call into the hasher costs as much as hashing a hundred
    /// bytes, and a 100,000-block course adds millions of fields.
    private var pending: [UInt8] = []
    private static let gathered = 1024

    public init(_ purpose: String) {
        pending.reserveCapacity(Self.gathered + 8)
        add(purpose)
    }

    public mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { add(buffer: UnsafeRawBufferPointer($0)) }
    }

    public mutating func add(bytes: some Collection<UInt8>) {
        if let done = bytes.withContiguousStorageIfAvailable({ add(buffer: UnsafeRawBufferPointer($0)) }) {
            return done
        }
        Array(bytes).withUnsafeBytes { add(buffer: $0) }
    }

    private mutating func add(buffer: UnsafeRawBufferPointer) {
        withUnsafeBytes(of: UInt64(buffer.count).littleEndian) { pending.append(contentsOf: $0) }
        if pending.count + buffer.count <= Self.gathered {
            pending.append(contentsOf: buffer)
            return
        }
        flush()
        hasher.update(bufferPointer: buffer)
    }

    private mutating func flush() {
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        pending.removeAll(keepingCapacity: true)
    }

    public func finish() -> String {
        var copy = self
        copy.flush()
        return SHA256Hex.hex(copy.hasher.finalize())
    }
}
