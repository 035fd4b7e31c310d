import Foundation
import Testing
import TestSupport
import ZipArchive
import ZlibStream

/// A file read while another program shortens it (a `cp` over it, a truncation) is an error
/// naming it; read through a mapping, the pages past the new end faulted with SIGBUS and the
/// process died (`verify` of a folder being rewritten: 4 of 12 runs).
@Suite struct FileSweepTests {
    @Test func aFileShortenedWhileItIsReadIsAnErrorNamingIt() throws {
        let folder = TestSupport.temporaryFolder("sweep")
        let path = folder + "/video.mp4"
        try TestSupport.writeBytes([UInt8](repeating: 7, count: 4 << 20), to: path)
        var seen = 0
        #expect {
            _ = try FileSweep.sweep(path) { piece in
                if seen == 0 { #expect(truncate(path, 1000) == 0) }
                seen += piece.count
            }
        } throws: { error in
            "\(error)".contains(path) && "\(error)".contains("shortened")
        }
        #expect(seen < 4 << 20)
    }

    @Test func everyByteIsPassedOnInOrderWithItsCRC() throws {
        let folder = TestSupport.temporaryFolder("sweep-all")
        let path = folder + "/data.bin"
        let bytes = (0..<(600 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try TestSupport.writeBytes(bytes, to: path)
        var read: [UInt8] = []
        let checksum = try FileSweep.sweep(path) { read.append(contentsOf: $0) }
        #expect(read == bytes)
        #expect(checksum.size == UInt64(bytes.count))
        var crc = CRC32()
        bytes.withUnsafeBytes { crc.update($0) }
        #expect(checksum.crc32 == crc.value)
    }
}
