import FileSystem
import Foundation

extension Outbox {
    /// How much one course's journal may hold. A bound on what a page can make the device keep:
    /// every later outbox read (the answers list, every sync) reads the whole journal.
    public struct Quota: Sendable, Equatable {
        public var bytes: Int64
        public var entries: Int
        /// Settled answers (sent, refused, held as a conflict) a full journal keeps when it is
        /// compacted to make room, newest first: the history a learner sees. Answers still to be
        /// sent are never dropped, so a journal full of them stays full until they are sent.
        public var settledKept: Int

        public init(bytes: Int64, entries: Int, settledKept: Int = 1_000) {
            self.bytes = bytes
            self.entries = entries
            self.settledKept = settledKept
        }

        /// Years of answers for one learner: records are a few hundred bytes each.
        public static let standard = Quota(bytes: 8 << 20, entries: 10_000)
    }

    /// The ids a journal holds, and how far into it they were read. `add` reads only the bytes
    /// appended since (by this host or any other process); a journal replaced or cut shorter is
    /// read again from its start.
    public struct Index: Sendable {
        var ids: Set<String> = []
        var scanned: Int64 = 0
        var file: Journal.Identity?

        public init() {}

        public var count: Int { ids.count }

        mutating func catchUp(on journal: Journal, size: Int64) {
            if file != journal.identity || size < scanned {
                self = Index()
                file = journal.identity
            }
            let chunk = 1 << 20
            var pending: [UInt8] = []
            while scanned + Int64(pending.count) < size {
                let start = scanned + Int64(pending.count)
                let bytes = journal.read(at: start, count: min(chunk, Int(size - start)))
                guard !bytes.isEmpty else { break }
                pending += bytes
                guard let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n")) else { continue }
                for line in pending[...lastNewline].split(separator: UInt8(ascii: "\n")) {
                    if let record = try? JSONDecoder().decode(IDRecord.self, from: Data(line)) { ids.insert(record.entry.id) }
                }
                scanned += Int64(lastNewline + 1)
                pending.removeFirst(lastNewline + 1)
            }
        }

        /// Only the id of each record: a catch-up need not decode answers' fields.
        private struct IDRecord: Decodable {
            struct Entry: Decodable { var id: String }
            var entry: Entry
        }
    }

    /// The journal file opened for one append: created owner-only, never through a link, and
    /// locked (flock) so that reading its end, checking the quota and appending are one step
    /// for every process that records answers.
    struct Journal {
        struct Identity: Sendable, Equatable {
            var device: UInt64
            var inode: UInt64
        }

        let fd: Int32
        let created: Bool
        let folder: String

        init(path: String) throws(OutboxError) {
            folder = DurableFile.folder(of: path)
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            created = access(path, F_OK) != 0
            fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw .unwritable(path: path, reason: String(cString: strerror(errno))) }
            guard flock(fd, LOCK_EX) == 0 else {
                let reason = String(cString: strerror(errno))
                Foundation.close(fd)
                throw .unwritable(path: path, reason: "cannot lock: \(reason)")
            }
        }

        /// Opens and locks the journal at `path` as it is once the lock is held: a compaction
        /// that ran while this process waited for the lock has renamed a new file into place,
        /// and a record appended to the old one would be lost with it.
        static func locked(path: String) throws(OutboxError) -> Journal {
            for _ in 0..<100 {
                let journal = try Journal(path: path)
                var named = stat()
                if lstat(path, &named) == 0, let identity = journal.identity,
                    identity == Identity(device: UInt64(named.st_dev), inode: UInt64(named.st_ino))
                {
                    return journal
                }
                journal.close()
            }
            throw .unwritable(path: path, reason: "the journal keeps being replaced")
        }

        func close() { Foundation.close(fd) }

        private func status() -> stat? {
            var info = stat()
            return fstat(fd, &info) == 0 ? info : nil
        }

        func size() -> Int64 { status().map { Int64($0.st_size) } ?? 0 }

        var identity: Identity? { status().map { Identity(device: UInt64($0.st_dev), inode: UInt64($0.st_ino)) } }

        func read(at offset: Int64, count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return got > 0 ? Array(bytes[..<got]) : []
        }

        /// Every byte of the journal, read through the locked descriptor.
        func readAll() -> [UInt8] {
            let size = size()
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(size))
            while Int64(bytes.count) < size {
                let piece = read(at: Int64(bytes.count), count: min(1 << 20, Int(size) - bytes.count))
                guard !piece.isEmpty else { break }
                bytes += piece
            }
            return bytes
        }

        /// Appends one record and syncs it to disk before returning: an answer acknowledged is
        /// an answer kept, through a crash or a power cut.
        func append(_ record: [UInt8], path: String) throws(OutboxError) {
            var line = record
            // A crash may have cut the last record short: start on a line of its own, or this
            // record would be glued to the torn one and ignored with it.
            let size = size()
            if size > 0, read(at: size - 1, count: 1) != [UInt8(ascii: "\n")] { line.insert(UInt8(ascii: "\n"), at: 0) }
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == line.count, fsync(fd) == 0 else {
                throw .unwritable(path: path, reason: String(cString: strerror(errno)))
            }
            if created { try? DurableFile.syncFolder(folder) }
        }
    }
}
