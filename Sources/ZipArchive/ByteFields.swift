/// Little-endian field encoding for ZIP headers.
struct ByteWriter {
    var bytes: [UInt8] = []
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
    mutating func u32(_ v: UInt32) { for i in 0..<4 { bytes.append(UInt8((v >> (8 * UInt32(i))) & 0xFF)) } }
    mutating func u64(_ v: UInt64) { for i in 0..<8 { bytes.append(UInt8((v >> (8 * UInt64(i))) & 0xFF)) } }
    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }
}

/// Reads little-endian fields, failing instead of trapping on short input.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int
    init(_ bytes: [UInt8], at position: Int = 0) { self.bytes = bytes; self.position = position }
    var remaining: Int { bytes.count - position }
    mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }
    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << (8 * UInt32(i)) }
        position += 4
        return v
    }
    mutating func u64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return v
    }
    mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, remaining >= n else { return nil }
        defer { position += n }
        return bytes[position..<position + n]
    }
}
