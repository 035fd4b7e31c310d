import FileSystem
import Foundation
import IncrementalBuild

/// What a rebuild needs of each html file a block keeps its HTML in, by the file's stamp: its
/// SHA-256 (part of the block's inputs) and whether it holds only style elements (which its
/// unit's other pages copy). A file whose whole stamp (size, inode, mtime, ctime) is the one
/// recorded, and that last changed more than `TreeStamp.settleMargin` before the build that
/// recorded it began reading (`writtenAt`), is not read again: at 100,000 blocks, reading and hashing every html file was a tenth of a
/// one-block edit. The rule is the hash cache's (`FileHashCache`), and like it this is a cache:
/// lost, older or damaged, it costs reading the files again, never a stale page.
struct HTMLFileFacts: Sendable, Equatable {
    struct Fact: Sendable, Equatable {
        var stamp: FileStamp
        var sha256: String
        /// Only `<style>`, `<link>` and `<script>`: its elements are read from the file each time.
        var styleOnly: Bool
    }

    static let fileName = "html-files.bin"
    static let format = "coursepack-html-files-v1"

    var writtenAt: Int64 = 0
    /// By export-relative path.
    var facts: [String: Fact] = [:]

    /// The recorded fact of `path`, if its file still has exactly the stamp it had then.
    func fact(of path: String, stamp: FileStamp) -> Fact? {
        guard let fact = facts[path], FileHashCache.vouches(for: stamp, recorded: fact.stamp, writtenAt: writtenAt) else { return nil }
        return fact
    }

    /// Empty when there is no usable file.
    static func load(from stateFolder: String) -> HTMLFileFacts {
        var loaded = HTMLFileFacts()
        guard let records = RecordFile.load(stateFolder + "/" + fileName, format: format), let head = records.first, head.count == 1,
            let writtenAt = RecordFile.integer(head[0])
        else { return loaded }
        loaded.writtenAt = writtenAt
        loaded.facts.reserveCapacity(records.count)
        for fields in records.dropFirst() {
            guard fields.count == 7, fields[5].count == 64, let size = RecordFile.integer(fields[1]), let inode = RecordFile.integer(fields[2]),
                let modified = RecordFile.integer(fields[3]), let changed = RecordFile.integer(fields[4])
            else { return HTMLFileFacts() }
            let stamp = FileStamp(size: UInt64(bitPattern: size), inode: UInt64(bitPattern: inode), modified: modified, changed: changed)
            loaded.facts[String(decoding: fields[0], as: UTF8.self)] = Fact(
                stamp: stamp, sha256: String(decoding: fields[5], as: UTF8.self), styleOnly: fields[6].first == 1)
        }
        return loaded
    }

    /// Saved unsynced, as every cache: `writtenAt`, on the file-time clock, is no later than the
    /// moment the files were first read (a build passes the time it began).
    func save(to stateFolder: String, writtenAt: Int64) {
        let paths = facts.keys.sorted()
        var file = RecordFile(format: Self.format, capacity: RecordFile.recordSize(fieldLengths: [8]) + paths.count * (4 + 4 * 7 + 32 + 64 + 1 + 48))
        file.add([RecordFile.field(writtenAt)])
        for path in paths {
            guard let fact = facts[path] else { continue }
            file.add([
                ArraySlice(path.utf8), RecordFile.field(Int64(bitPattern: fact.stamp.size)), RecordFile.field(Int64(bitPattern: fact.stamp.inode)),
                RecordFile.field(fact.stamp.modified), RecordFile.field(fact.stamp.changed), ArraySlice(fact.sha256.utf8), [fact.styleOnly ? 1 : 0],
            ])
        }
        file.save(to: stateFolder + "/" + Self.fileName, synced: false)
    }
}
