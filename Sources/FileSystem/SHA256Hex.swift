import Crypto
import Foundation

/// SHA-256 as the lowercase hex every manifest, cache and request in coursepack uses.
public enum SHA256Hex {
    public static func of<Bytes: DataProtocol>(_ bytes: Bytes) -> String {
        hex(SHA256.hash(data: bytes))
    }

    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// SHA-256 of a file, read in chunks: memory stays bounded whatever its size.
    public static func ofFile(_ path: String) throws(FileError) -> String {
        let input = try InputFile(path: path)
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: fileChunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try input.read(into: buffer)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return hex(hasher.finalize())
    }

    private static let digits = Array("0123456789abcdef".utf8)
}
