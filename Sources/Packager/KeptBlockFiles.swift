import CourseExport
import FileSystem
import Foundation
import IncrementalBuild

/// The course's block definition files as the last build read them, kept in the state folder
/// so that a rebuild reads from the disk only the files whose stamps changed. At 100,000 blocks
/// a load opened and read 123,000 files of about 300 bytes each (37 MB in all): 3 s of a
/// one-block edit with the files in the page cache, 7 s once it had let them go, against one
/// read of this file. A file is taken from here only while its whole stamp (size, inode, mtime,
/// ctime) is the recorded one and it last changed more than `TreeStamp.settleMargin` before the
/// build that read it began (`FileHashCache.vouches`, the rule of every cache kept by stamps),
/// and only for the same export folder. Like those caches, this one is lost, older or damaged
/// at no cost but reading the files again: its checksum covers every byte (`RecordFile`), and
/// the bytes it gives are parsed and checked as the disk's would be.
struct KeptBlockFiles: KnownBlockFiles {
    static let fileName = "block-files.bin"
    static let format = "coursepack-block-files-v1"

    private struct Entry {
        let stamp: FileStamp
        let bytes: ArraySlice<UInt8>
    }

    /// The export folder the files were read from (canonical).
    let root: String
    /// When the build that read them began, on the file-time clock.
    let writtenAt: Int64
    private let entries: [String: Entry]

    var count: Int { entries.count }

    private init(root: String, writtenAt: Int64, entries: [String: Entry]) {
        (self.root, self.writtenAt, self.entries) = (root, writtenAt, entries)
    }

    /// None kept: every file is read.
    static let none = KeptBlockFiles(root: "", writtenAt: .min, entries: [:])

    func bytes(of path: String, stamp: FileStamp) -> [UInt8]? {
        guard let entry = entries[path], FileHashCache.vouches(for: stamp, recorded: entry.stamp, writtenAt: writtenAt) else { return nil }
        return Array(entry.bytes)
    }

    /// The files kept, for the export folder they name (a load of another ignores them); none
    /// when there is no usable file.
    static func load(from stateFolder: String) -> KeptBlockFiles {
        guard let records = RecordFile.load(stateFolder + "/" + fileName, format: format), let head = records.first, head.count == 2,
            let writtenAt = RecordFile.integer(head[1])
        else { return .none }
        let root = String(decoding: head[0], as: UTF8.self)
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(records.count - 1)
        for fields in records.dropFirst() {
            guard fields.count == 6, let size = RecordFile.integer(fields[1]), let inode = RecordFile.integer(fields[2]),
                let modified = RecordFile.integer(fields[3]), let changed = RecordFile.integer(fields[4]),
                UInt64(bitPattern: size) == UInt64(fields[5].count)
            else { return .none }
            let stamp = FileStamp(size: UInt64(bitPattern: size), inode: UInt64(bitPattern: inode), modified: modified, changed: changed)
            entries[String(decoding: fields[0], as: UTF8.self)] = Entry(stamp: stamp, bytes: fields[5])
        }
        return KeptBlockFiles(root: root, writtenAt: writtenAt, entries: entries)
    }

    /// Whether `read` (a load given `kept`) holds anything `kept` does not: a file read from the
    /// disk, or a different set of files. Otherwise the file already says it all.
    static func differs(_ read: [ReadBlockFile], from kept: KeptBlockFiles) -> Bool {
        read.count != kept.count || read.contains(where: \.fromDisk)
    }

    /// Saved unsynced, as every cache. `writtenAt`: no later than the moment the files were
    /// first stamped (a build passes the time it began).
    static func save(_ read: [ReadBlockFile], root: String, to stateFolder: String, writtenAt: Int64) {
        let capacity = read.reduce(RecordFile.recordSize(fieldLengths: [root.utf8.count, 8])) {
            $0 + RecordFile.recordSize(fieldLengths: [$1.path.utf8.count, 8, 8, 8, 8, $1.bytes.count])
        }
        var file = RecordFile(format: format, capacity: capacity)
        file.add([ArraySlice(root.utf8), RecordFile.field(writtenAt)])
        for entry in read {
            file.add([
                ArraySlice(entry.path.utf8), RecordFile.field(Int64(bitPattern: entry.stamp.size)),
                RecordFile.field(Int64(bitPattern: entry.stamp.inode)), RecordFile.field(entry.stamp.modified),
                RecordFile.field(entry.stamp.changed), entry.bytes[...],
            ])
        }
        file.save(to: stateFolder + "/" + fileName, synced: false)
    }
}
