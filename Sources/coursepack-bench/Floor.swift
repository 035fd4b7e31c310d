import Crypto
import FileSystem
import Foundation
import ZlibStream

/// What this machine can do at best on a course's bytes, each stage timed alone with the same
/// calls coursepack makes: the page cache read, the kernel's copy (copy_file_range, what `cp`
/// does), SHA-256 (swift-crypto), CRC-32 (zlib) and deflate at coursepack's level (zlib).
/// `make bench` sets coursepack's stages beside these.
enum Floor {
    struct Rate: Codable {
        let bytes: UInt64
        let seconds: Double
        var mbPerSecond: Double { Double(bytes) / 1_048_576 / max(seconds, 1e-9) }
    }

    /// Each figure is the best of `rounds` passes over the files (their pages cached by the first).
    static func measure(media: [String], text: [String], scratch: String, level: Int32, rounds: Int) throws -> [String: Rate] {
        var best: [String: Rate] = [:]
        func keep(_ label: String, _ rate: Rate) {
            if let known = best[label], known.seconds <= rate.seconds { return }
            best[label] = rate
        }
        let loaded = try media.map { try [UInt8](Data(contentsOf: URL(fileURLWithPath: $0))) }
        let texts = try text.flatMap { try [UInt8](Data(contentsOf: URL(fileURLWithPath: $0))) }
        for round in 0..<rounds {
            keep("read", try timed { try read(media) })
            keep("copy_file_range", try timed { try kernelCopy(media, into: scratch + "/round\(round)") })
            keep("sha256", timed { sha256(loaded) })
            keep("crc32", timed { crc32(loaded) })
            keep("deflate", try timed { try deflate(texts, level: level) })
        }
        return best
    }

    private static func timed(_ body: () throws -> UInt64) rethrows -> Rate {
        let started = DispatchTime.now().uptimeNanoseconds
        let bytes = try body()
        return Rate(bytes: bytes, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
    }

    private static func read(_ paths: [String]) throws -> UInt64 {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: fileChunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var total: UInt64 = 0
        for path in paths {
            let input = try InputFile(path: path)
            while case let n = try input.read(into: buffer), n > 0 { total += UInt64(n) }
        }
        return total
    }

    /// Every file copied once into `folder` by the kernel (read and written where it cannot).
    private static func kernelCopy(_ paths: [String], into folder: String) throws -> UInt64 {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var total: UInt64 = 0
        for (index, path) in paths.enumerated() {
            let input = try InputFile(path: path)
            let out = try OutputFile(creating: folder + "/\(index)")
            total += try out.append(from: input, at: 0, count: try input.size)
            try out.close()
        }
        return total
    }

    private static func sha256(_ contents: [[UInt8]]) -> UInt64 {
        var total: UInt64 = 0
        for bytes in contents {
            _ = SHA256.hash(data: bytes)
            total += UInt64(bytes.count)
        }
        return total
    }

    private static func crc32(_ contents: [[UInt8]]) -> UInt64 {
        var total: UInt64 = 0
        for bytes in contents {
            _ = CRC32.checksum(bytes)
            total += UInt64(bytes.count)
        }
        return total
    }

    /// One stream over all of it: zlib's own rate, without the setting up of a stream per file
    /// that coursepack pays (part of what the floor shows it costs).
    private static func deflate(_ contents: [UInt8], level: Int32) throws -> UInt64 {
        let stream = try ZStream(.deflate(level: level))
        try contents.withUnsafeBytes { raw in try stream.deflate(raw, finish: true) { _ in } }
        return UInt64(contents.count)
    }
}
