import Foundation
import ZlibStream

/// Unpacks a gzip-compressed tar archive in-process, refusing anything that could write outside
/// the target folder or exhaust the disk: absolute or `..` names, links, device files,
/// duplicate names, and archives that expand beyond sane bounds (gzip bombs).
struct TarGzExtractor {
    static let maximumTotalSize: UInt64 = 32 << 30
    static let maximumEntries = 500_000
    /// Course exports hold XML, HTML and media; deflate ratios past this mean a bomb.
    static let maximumRatio: UInt64 = 200

    let archive: String

    func extract(into folder: String) throws(CourseError) {
        let input: FileHandle
        do {
            input = try FileHandle(forReadingFrom: URL(fileURLWithPath: archive))
        } catch {
            throw .unreadable(path: archive, reason: "cannot open it")
        }
        defer { try? input.close() }
        var reader = GunzipReader(input: input, archive: archive)
        var tar = TarReader(archive: archive, folder: folder)
        do {
            try tar.run(&reader)
        } catch let error as CourseError {
            throw error
        } catch let error as ZlibError {
            throw .unreadable(path: archive, reason: "not a valid gzip file (\(error))")
        } catch {
            throw .unreadable(path: archive, reason: "\(error)")
        }
    }
}

/// Pulls decompressed bytes out of a gzip file, a small input chunk at a time so one chunk of a
/// bomb cannot expand without bound.
struct GunzipReader {
    let input: FileHandle
    let archive: String
    private let stream: ZStream
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var leftover: [UInt8] = []
    private var ended = false
    private var insideMember = false
    private(set) var consumed: UInt64 = 0
    private(set) var produced: UInt64 = 0

    init(input: FileHandle, archive: String) {
        self.input = input
        self.archive = archive
        // Initialisation only fails when zlib cannot allocate a few kilobytes.
        self.stream = try! ZStream(.gunzip)
    }

    /// Fills `count` bytes; returns fewer only at the end of the data.
    mutating func read(_ count: Int) throws -> [UInt8] {
        while pending.count - pendingStart < count && !ended {
            try refill()
        }
        let end = min(pending.count, pendingStart + count)
        let result = Array(pending[pendingStart..<end])
        pendingStart = end
        if pendingStart > 1 << 20 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        return result
    }

    private mutating func refill() throws {
        var chunk = leftover
        leftover = []
        if chunk.isEmpty {
            chunk = [UInt8](try input.read(upToCount: 16 * 1024) ?? Data())
            consumed += UInt64(chunk.count)
        }
        if chunk.isEmpty {
            if produced == 0 { throw CourseError.unreadable(path: archive, reason: "empty file, not a .tar.gz") }
            if insideMember { throw CourseError.unreadable(path: archive, reason: "truncated: the gzip data ends early") }
            ended = true
            return
        }
        insideMember = true
        var output: [UInt8] = []
        let (streamEnded, trailing) = try chunk.withUnsafeBytes { raw in
            try stream.inflate(raw) { output.append(contentsOf: $0) }
        }
        produced += UInt64(output.count)
        pending.append(contentsOf: output)
        if produced > TarGzExtractor.maximumTotalSize
            || (produced > 256 << 20 && produced / max(consumed, 1) > TarGzExtractor.maximumRatio)
        {
            throw CourseError.unsafeArchive(path: archive, reason: "expands to more than \(produced) bytes from \(consumed) (a gzip bomb?)")
        }
        if streamEnded {
            // A .gz may hold several members one after another.
            insideMember = false
            stream.reset()
            if trailing > 0 { leftover = Array(chunk.suffix(trailing)) }
        }
    }

    /// Reads to the end, so a truncated or corrupt tail is noticed.
    mutating func drain() throws {
        while !(try read(1 << 20)).isEmpty {}
    }
}

/// Reads tar headers (ustar, GNU long names, pax paths) and writes regular files.
struct TarReader {
    let archive: String
    let folder: String
    private var written: Set<String> = []
    private var entries = 0

    init(archive: String, folder: String) {
        self.archive = archive
        self.folder = folder
    }

    func fail(_ reason: String) -> CourseError { .unsafeArchive(path: archive, reason: reason) }
    func corrupt(_ reason: String) -> CourseError { .unreadable(path: archive, reason: reason) }

    mutating func run(_ reader: inout GunzipReader) throws {
        var longName: String?
        var sawEnd = false
        while true {
            let header = try reader.read(512)
            if header.isEmpty { break }
            guard header.count == 512 else { throw corrupt("truncated: the archive ends inside a tar header") }
            if header.allSatisfy({ $0 == 0 }) {
                sawEnd = true
                break
            }
            guard Self.checksumMatches(header) else { throw corrupt("a tar header fails its checksum (corrupt or not a tar archive)") }
            entries += 1
            guard entries <= TarGzExtractor.maximumEntries else { throw fail("more than \(TarGzExtractor.maximumEntries) entries") }
            guard let size = Self.number(header[124..<136]) else { throw corrupt("a tar header has an invalid size field") }
            // Every later sum over sizes stays far from overflow once no entry may claim more
            // than the whole archive may hold.
            guard size <= TarGzExtractor.maximumTotalSize else {
                throw fail("an entry claims \(size) bytes, more than a course export may hold (\(TarGzExtractor.maximumTotalSize))")
            }
            let type = header[156]
            var name = longName ?? Self.headerName(header)
            longName = nil
            switch type {
            case UInt8(ascii: "L"), UInt8(ascii: "x"):
                guard size <= 1 << 20 else { throw corrupt("oversized extended header") }
                let data = try readData(&reader, size: size)
                if type == UInt8(ascii: "L") {
                    longName = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
                } else if let path = Self.paxPath(data) {
                    longName = path
                }
            case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
                name = try safeName(name)
                try writeFile(&reader, name: name, size: size)
            case UInt8(ascii: "5"):
                name = try safeName(name)
                try makeDirectories(name)
                try skip(&reader, size: size)
            case UInt8(ascii: "g"), UInt8(ascii: "K"):
                try skip(&reader, size: size)
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                throw fail("entry \"\(name)\" is a \(type == UInt8(ascii: "1") ? "hard link" : "symbolic link"); course exports hold none")
            default:
                throw fail("entry \"\(name)\" is a device, FIFO or unknown entry type '\(Character(Unicode.Scalar(type)))'")
            }
        }
        guard sawEnd else { throw corrupt("truncated: the tar end marker is missing") }
        try reader.drain()
    }

    static func checksumMatches(_ header: [UInt8]) -> Bool {
        guard let stored = number(header[148..<156]) else { return false }
        var sum: UInt64 = 0
        for (i, b) in header.enumerated() { sum += (148..<156).contains(i) ? 32 : UInt64(b) }
        return sum == stored
    }

    static func number(_ field: ArraySlice<UInt8>) -> UInt64? {
        if let first = field.first, first & 0x80 != 0 {
            var value: UInt64 = UInt64(first & 0x7F)
            for b in field.dropFirst() {
                guard value <= UInt64.max >> 8 else { return nil }
                value = value << 8 | UInt64(b)
            }
            return value
        }
        let text = String(decoding: field.prefix { $0 != 0 }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? 0 : UInt64(text, radix: 8)
    }

    static func headerName(_ header: [UInt8]) -> String {
        let name = String(decoding: header[0..<100].prefix { $0 != 0 }, as: UTF8.self)
        let isUstar = header[257..<262].elementsEqual("ustar".utf8)
        let prefix = isUstar ? String(decoding: header[345..<500].prefix { $0 != 0 }, as: UTF8.self) : ""
        return prefix.isEmpty ? name : prefix + "/" + name
    }

    static func paxPath(_ data: [UInt8]) -> String? {
        // Records are "LEN key=value\n".
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            let record = line[line.index(after: space)...]
            if record.hasPrefix("path=") { return String(record.dropFirst(5)) }
        }
        return nil
    }

    func safeName(_ raw: String) throws -> String {
        var name = raw
        while name.hasPrefix("./") { name.removeFirst(2) }
        while name.hasSuffix("/") { name.removeLast() }
        if name.isEmpty { return "." }
        if name.hasPrefix("/") { throw fail("entry \"\(raw)\" has an absolute path") }
        if name.contains("\0") || name.contains("\\") { throw fail("entry \"\(raw)\" has a NUL or backslash in its name") }
        let parts = name.split(separator: "/", omittingEmptySubsequences: true)
        if parts.contains(where: { $0 == ".." }) { throw fail("entry \"\(raw)\" climbs out of the archive with ..") }
        return parts.filter { $0 != "." }.joined(separator: "/")
    }

    func makeDirectories(_ name: String) throws {
        guard name != "." else { return }
        do {
            try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true)
        } catch {
            throw CourseError.unreadable(path: archive, reason: "cannot unpack \"\(name)\": \(error.localizedDescription)")
        }
    }

    mutating func writeFile(_ reader: inout GunzipReader, name: String, size: UInt64) throws {
        guard written.insert(name).inserted else { throw fail("entry \"\(name)\" appears twice") }
        if let slash = name.lastIndex(of: "/") { try makeDirectories(String(name[..<slash])) }
        let path = folder + "/" + name
        let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw corrupt("cannot unpack \"\(name)\": \(String(cString: strerror(errno)))") }
        defer { Foundation.close(fd) }
        var remaining = size
        while remaining > 0 {
            let chunk = try reader.read(Int(min(remaining, 1 << 20)))
            guard !chunk.isEmpty else { throw corrupt("truncated: the archive ends inside \"\(name)\"") }
            let n = chunk.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
            guard n == chunk.count else { throw corrupt("cannot unpack \"\(name)\": \(String(cString: strerror(errno)))") }
            remaining -= UInt64(chunk.count)
        }
        try skip(&reader, size: 0, padding: size)
    }

    func readData(_ reader: inout GunzipReader, size: UInt64) throws -> [UInt8] {
        let data = try reader.read(Int(size))
        guard data.count == Int(size) else { throw corrupt("truncated: the archive ends inside a header") }
        try skip(&reader, size: 0, padding: size)
        return data
    }

    /// Skips `size` bytes of data and the padding that rounds `padding` (default: size) up to 512.
    func skip(_ reader: inout GunzipReader, size: UInt64, padding: UInt64? = nil) throws {
        let (total, overflow) = size.addingReportingOverflow((512 - (padding ?? size) % 512) % 512)
        guard !overflow else { throw corrupt("an entry's size \(size) is past any archive's end") }
        var remaining = total
        while remaining > 0 {
            let chunk = try reader.read(Int(min(remaining, 1 << 20)))
            guard !chunk.isEmpty else { throw corrupt("truncated: the archive ends inside an entry") }
            remaining -= UInt64(chunk.count)
        }
    }
}
