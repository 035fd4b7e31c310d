/// A single gzip member (RFC 1952) around a raw deflate stream, written the same way every
/// time: no name, no comment, modification time 0, extra flags 0, operating system 255
/// (unknown). Its deflate stream and CRC-32 are those of a ZIP entry, so an archive copies them
/// from the published file as they are.
public enum GzipMember {
    /// The fixed 10-byte header.
    public static let header: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF]
    public static let trailerSize = 8
    /// Bytes of a member around `deflated` bytes of deflate stream.
    public static func size(deflated: UInt64) -> UInt64 { deflated + UInt64(header.count + trailerSize) }

    /// CRC-32 then the size modulo 2^32, little-endian.
    public static func trailer(crc32: UInt32, size: UInt64) -> [UInt8] {
        var w = ByteWriter()
        w.u32(crc32)
        w.u32(UInt32(truncatingIfNeeded: size))
        return w.bytes
    }

    /// The CRC-32 and size (modulo 2^32) a trailer holds; nil unless it is 8 bytes.
    public static func readTrailer(_ bytes: [UInt8]) -> (crc32: UInt32, sizeModulo: UInt32)? {
        guard bytes.count == trailerSize else { return nil }
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * $1) } }
        return (u32(0), u32(4))
    }
}
