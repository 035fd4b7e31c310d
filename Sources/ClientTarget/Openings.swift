#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FileSystem

/// The blocks opened since `target.json` was last written, one line each (course folder, usage
/// id, seconds since 1970, tab-separated) in `opened.tsv` beside it, appended and synced under
/// the state lock. `readState` takes them in (each sets the block's last use and opening, in the
/// order they came); `writeState`, which always writes a state read that way under the same
/// lock, removes the journal once `target.json` holds them. A line cut short by a crash (ended
/// by the next append with a fourth field), or naming a course the state does not list, is
/// dropped.
enum Openings {
    static let fileName = "opened.tsv"
    /// Past this size an opening writes the state whole, which empties the journal.
    static let compactSize = 256 << 10

    struct Opening: Equatable {
        var folder: String
        var usageID: String
        var time: Double
    }

    /// Appends `opening`; returns whether the journal has grown past `compactSize`.
    static func append(_ opening: Opening, in stateFolder: String) throws(ClientError) -> Bool {
        let path = stateFolder + "/" + fileName
        let fields = [opening.folder, opening.usageID]
        guard fields.allSatisfy({ !$0.utf8.contains { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D } }) else {
            throw .invalidRequest("a course folder or block id with a tab or a line break cannot be recorded")
        }
        var line = Array((fields.joined(separator: "\t") + "\t\(opening.time)\n").utf8)
        // Not blocking on a FIFO put in its place, and only ever a regular file.
        let descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard descriptor >= 0 else { throw .local(path: path, reason: "cannot be opened: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var before = stat()
        guard fstat(descriptor, &before) == 0, before.st_mode & S_IFMT == S_IFREG else {
            throw .local(path: path, reason: "is not a regular file: nothing is recorded in it")
        }
        // A line a crash or a full disk cut short is ended here with a field that no whole line
        // has (so it is dropped, even where its last field still reads as a time), and this one
        // is read whole.
        var last: UInt8 = 0x0A
        if before.st_size > 0, pread(descriptor, &last, 1, before.st_size - 1) == 1, last != 0x0A {
            line.insert(contentsOf: Array("\tcut\n".utf8), at: 0)
        }
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count, fsync(descriptor) == 0 else {
            throw .local(path: path, reason: "cannot be written: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        return fstat(descriptor, &info) == 0 && Int(info.st_size) > compactSize
    }

    /// The journal's openings, in the order they were recorded; none when there is no journal.
    static func read(_ stateFolder: String) -> [Opening] {
        guard let bytes = try? WholeFile.read(stateFolder + "/" + fileName, atMost: WholeFile.stateLimit) else { return [] }
        var openings: [Opening] = []
        // The last line is whole only when a line break ends it.
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true).dropLast(bytes.last == 0x0A ? 0 : 1) {
            let fields = line.split(separator: 0x09, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            guard fields.count == 3, !fields[0].isEmpty, !fields[1].isEmpty, let time = Double(fields[2]), time.isFinite else { continue }
            openings.append(Opening(folder: fields[0], usageID: fields[1], time: time))
        }
        return openings
    }

    static func apply(_ openings: [Opening], to state: inout ClientTarget.State) {
        for opening in openings {
            guard var record = state.courses[opening.folder] else { continue }
            record.lastUse[opening.usageID] = opening.time
            var opened = record.opened ?? [:]
            opened[opening.usageID] = opening.time
            record.opened = opened
            state.courses[opening.folder] = record
        }
    }

    static func clear(_ stateFolder: String) {
        unlink(stateFolder + "/" + fileName)
    }
}
