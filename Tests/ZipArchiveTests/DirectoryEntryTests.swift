import FileSystem
import Foundation
import Testing
import TestSupport

/// Names are read from a `readdir` record where it lies, never by copying the record: glibc
/// packs records at their own length, and the last one in its buffer may end right before an
/// unmapped page.
@Suite struct DirectoryEntryTests {
    /// A record as short as its name allows, ending at the last byte before a page that may not
    /// be read: a copy of `d_name` (256 bytes) faults, as the course walk did on a 100,000-file
    /// course once in a few runs.
    @Test func aRecordEndingAtAnUnreadablePageIsReadInPlace() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapped = try #require(mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        #expect(mapped != MAP_FAILED)
        defer { munmap(mapped, 2 * page) }
        #expect(mprotect(mapped + page, page, PROT_NONE) == 0)

        let name = Array("a.xml".utf8)
        let nameOffset = try #require(MemoryLayout<dirent>.offset(of: \dirent.d_name))
        let length = (nameOffset + name.count + 1 + 7) & ~7
        #expect(length < MemoryLayout<dirent>.size)
        let record = mapped + page - length
        memset(record, 0, length)
        record.storeBytes(of: UInt16(length), toByteOffset: try #require(MemoryLayout<dirent>.offset(of: \dirent.d_reclen)), as: UInt16.self)
        record.storeBytes(of: UInt8(DT_REG), toByteOffset: try #require(MemoryLayout<dirent>.offset(of: \dirent.d_type)), as: UInt8.self)
        for (index, byte) in name.enumerated() { record.storeBytes(of: byte, toByteOffset: nameOffset + index, as: UInt8.self) }

        let entry = UnsafePointer(record.assumingMemoryBound(to: dirent.self))
        #expect(Array(DirectoryEntry.name(of: entry)) == name)
        #expect(DirectoryEntry.type(of: entry) == UInt8(DT_REG))
        #expect(!DirectoryEntry.isDotOrDotDot(DirectoryEntry.name(of: entry)))
    }

    /// A real listing through the helper: every name, "." and ".." told apart from names that
    /// start with dots.
    @Test func aFolderListsItsOwnNames() throws {
        let folder = TestSupport.temporaryFolder("listing")
        let names = ["a", "..b", ".c", "long-" + String(repeating: "n", count: 200)]
        for name in names { #expect(FileManager.default.createFile(atPath: folder + "/" + name, contents: Data())) }
        let stream = try #require(opendir(folder))
        defer { closedir(stream) }
        var listed: [String] = []
        while let entry = readdir(stream) {
            let name = DirectoryEntry.name(of: entry)
            if !DirectoryEntry.isDotOrDotDot(name) { listed.append(String(decoding: name, as: UTF8.self)) }
        }
        #expect(listed.sorted() == names.sorted())
    }
}

/// A folder's typed entries, as the build lists its output folder.
@Suite struct TypedListingTests {
    @Test func entriesAreTypedAsFilesFoldersAndLinks() throws {
        let folder = TestSupport.temporaryFolder("typed-listing")
        #expect(FileManager.default.createFile(atPath: folder + "/file.zip", contents: Data()))
        try FileManager.default.createDirectory(atPath: folder + "/html", withIntermediateDirectories: false)
        #expect(symlink(folder + "/html", folder + "/linked") == 0)
        #expect(symlink(folder + "/nowhere", folder + "/dangling") == 0)
        #expect(mkfifo(folder + "/pipe", 0o600) == 0)
        let entries = try #require(DirectoryEntry.entries(of: folder))
        let kinds = Dictionary(uniqueKeysWithValues: entries.map { ($0.name, $0.kind) })
        #expect(kinds == ["file.zip": .file, "html": .folder, "linked": .link, "dangling": .link, "pipe": .other])
        #expect(DirectoryEntry.entries(of: folder + "/missing") == nil)
        #expect(DirectoryEntry.entries(of: folder + "/file.zip") == nil)
    }
}

/// File times in nanoseconds, whatever time a file was given.
@Suite struct FileTimeTests {
    @Test func timesBeyondInt64NanosecondsSaturate() {
        #expect(FileStamp.nanoseconds(timespec(tv_sec: 1_700_000_000, tv_nsec: 5)) == 1_700_000_000_000_000_005)
        #expect(FileStamp.nanoseconds(timespec(tv_sec: -1, tv_nsec: 0)) == -1_000_000_000)
        #expect(FileStamp.nanoseconds(timespec(tv_sec: 10_000_000_000, tv_nsec: 0)) == FileStamp.farthestTime)
        #expect(FileStamp.nanoseconds(timespec(tv_sec: -10_000_000_000, tv_nsec: 0)) == -FileStamp.farthestTime)
        #expect(FileStamp.nanoseconds(timespec(tv_sec: Int.max, tv_nsec: 999_999_999)) == FileStamp.farthestTime)
        #expect(FileStamp.nanoseconds(timespec(tv_sec: Int.min, tv_nsec: 0)) == -FileStamp.farthestTime)
        // The margin left below Int64's limits holds a cut to a two-second resolution.
        let cut = -FileStamp.farthestTime - ((-FileStamp.farthestTime % 2_000_000_000) + 2_000_000_000) % 2_000_000_000
        #expect(cut <= -FileStamp.farthestTime)
    }
}

