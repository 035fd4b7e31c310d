import CZlib

/// CRC-32 as ZIP defines it, computed by zlib.
public struct CRC32: Sendable {
    public private(set) var value: UInt32 = 0
    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var remaining = bytes.count
        var pointer = base.assumingMemoryBound(to: Bytef.self)
        var crc = uLong(value)
        while remaining > 0 {
            let n = min(remaining, Int(UInt32.max >> 1))
            crc = crc32(crc, pointer, uInt(n))
            pointer += n
            remaining -= n
        }
        value = UInt32(truncatingIfNeeded: crc)
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc = CRC32()
        bytes.withUnsafeBytes { crc.update($0) }
        return crc.value
    }
}

/// Errors zlib reports, with the operation that failed.
public struct ZlibError: Error, Equatable, CustomStringConvertible {
    public let operation: String
    public let code: Int32

    public init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    public var description: String {
        let reason = code == Z_DATA_ERROR ? "corrupt compressed data" : code == Z_MEM_ERROR ? "out of memory" : "code \(code)"
        return "zlib \(operation) failed: \(reason)"
    }
}

/// A deflate or inflate stream over zlib, fed in chunks so memory stays bounded. Raw streams
/// (no header) are what ZIP stores; `gunzip` reads .gz files.
public final class ZStream {
    public enum Kind { case deflate(level: Int32), inflate, gunzip }
    public static let chunkSize = 256 * 1024

    private var stream = z_stream()
    private let kind: Kind
    private var output = [UInt8](repeating: 0, count: ZStream.chunkSize)

    public init(_ kind: Kind) throws(ZlibError) {
        self.kind = kind
        let size = Int32(MemoryLayout<z_stream>.size)
        let code: Int32
        switch kind {
        case .deflate(let level):
            code = deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), size)
        case .inflate:
            code = inflateInit2_(&stream, -15, zlibVersion(), size)
        case .gunzip:
            code = inflateInit2_(&stream, 15 + 16, zlibVersion(), size)
        }
        guard code == Z_OK else { throw ZlibError(operation: "init", code: code) }
    }

    deinit {
        switch kind {
        case .deflate: deflateEnd(&stream)
        case .inflate, .gunzip: inflateEnd(&stream)
        }
    }

    /// One zlib call into the output buffer; what it produced goes to `sink`. Codes other than
    /// OK, stream end and "no progress possible" are errors.
    private func step(
        _ operation: String, sink: (UnsafeRawBufferPointer) throws -> Void, _ call: (inout z_stream) -> Int32
    ) throws -> (code: Int32, produced: Int) {
        let (code, produced) = output.withUnsafeMutableBytes { out -> (Int32, Int) in
            stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(out.count)
            let code = call(&stream)
            return (code, out.count - Int(stream.avail_out))
        }
        guard code == Z_OK || code == Z_STREAM_END || code == Z_BUF_ERROR else {
            throw ZlibError(operation: operation, code: code)
        }
        if produced > 0 {
            try output.withUnsafeBytes { raw in try sink(UnsafeRawBufferPointer(rebasing: raw[0..<produced])) }
        }
        return (code, produced)
    }

    /// Compresses `input`, handing each produced chunk to `sink`; `finish` flushes the stream.
    public func deflate(
        _ input: UnsafeRawBufferPointer, finish: Bool,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        let flush = finish ? Z_FINISH : Z_NO_FLUSH
        while true {
            let (code, _) = try step("deflate", sink: sink) { CZlib.deflate(&$0, flush) }
            if finish ? code == Z_STREAM_END : (stream.avail_in == 0 && stream.avail_out != 0) { return }
        }
    }

    /// Decompresses `input`; returns true when the stream has ended. Unconsumed input after the
    /// end is reported through `trailing`.
    public func inflate(
        _ input: UnsafeRawBufferPointer,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> (ended: Bool, trailing: Int) {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        while true {
            let (code, produced) = try step("inflate", sink: sink) { CZlib.inflate(&$0, Z_NO_FLUSH) }
            if code == Z_STREAM_END { return (true, Int(stream.avail_in)) }
            if stream.avail_in == 0 && stream.avail_out != 0 { return (false, 0) }
            if code == Z_BUF_ERROR && produced == 0 { return (false, Int(stream.avail_in)) }
        }
    }

    /// Starts a new gzip member after the previous one ended (concatenated .gz files).
    public func reset() { inflateReset(&stream) }
}
