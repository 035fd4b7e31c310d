import Crypto
import FileSystem
import Foundation
import Testing
import TestSupport
import ZipArchive
import ZlibStream

/// Stored entries copied from a published file go through the kernel (copy_file_range) where
/// the file system can, and through read and write where it cannot; the archive is the same.
@Suite struct KernelCopyTests {
    /// Incompressible bytes with an MP4 header, several write buffers long, as a media file is.
    static func media(size: Int, seed: UInt64) -> [UInt8] {
        var rng = SeededGenerator(state: seed)
        var bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.replaceSubrange(0..<12, with: [0, 0, 0, 0x18] + Array("ftypisom".utf8))
        return bytes
    }

    /// A folder on another file system than the temporary folder (tmpfs at /dev/shm): a copy
    /// from it into /tmp is refused by the kernel with EXDEV.
    static func otherFileSystemFolder() throws -> String {
        var here = statvfs(), there = statvfs()
        #expect(statvfs(NSTemporaryDirectory(), &here) == 0)
        try #require(statvfs("/dev/shm", &there) == 0, "/dev/shm is needed as a second file system")
        try #require(here.f_fsid != there.f_fsid, "/dev/shm and the temporary folder are one file system")
        var template = Array("/dev/shm/coursepack-kernel-copy-XXXXXX".utf8CString)
        let made = try #require(mkdtemp(&template))
        return String(cString: made)
    }

    @Test func theKernelCopiesOnOneFileSystemAndReadWriteTakesOverAcrossFileSystems() throws {
        let bytes = Self.media(size: 3 * fileChunkSize + 12_345, seed: 11)
        let root = TestSupport.temporaryFolder("kcopy")
        let shm = try Self.otherFileSystemFolder()
        defer { try? FileManager.default.removeItem(atPath: shm) }
        try TestSupport.writeBytes(bytes, to: root + "/clip.mp4")
        try TestSupport.writeBytes(bytes, to: shm + "/clip.mp4")
        for (label, source, kernel, expectKernel) in [
            ("same", root + "/clip.mp4", true, true), ("exdev", shm + "/clip.mp4", true, false),
            ("disabled", root + "/clip.mp4", false, false),
        ] {
            var observed = SHA256()
            let out = try OutputFile(creating: root + "/\(label).out", observer: { observed.update(bufferPointer: $0) })
            out.copiesInKernel = kernel
            try out.write([1, 2, 3])  // a header before the data, as in an archive
            let copied = try out.append(from: try InputFile(path: source), at: 7, count: UInt64(bytes.count - 7))
            try out.write([4, 5])
            try out.close()
            #expect(copied == UInt64(bytes.count - 7), "\(label)")
            #expect(out.kernelCopiedBytes == (expectKernel ? copied : 0), "\(label)")
            let expected = [1, 2, 3] + bytes[7...] + [4, 5]
            #expect(TestSupport.read(root + "/\(label).out") == expected, "\(label)")
            #expect(out.observedFinalBytes && Array(observed.finalize()) == Array(SHA256.hash(data: expected)), "\(label)")
        }
    }

    /// A copy smaller than `smallestKernelCopy` (a shared stylesheet or script, copied into each
    /// of thousands of pages) is read and written through the buffer: the kernel's copy and the
    /// mapping to observe it cost more than its bytes. From the middle of a buffered write, with
    /// the observer seeing the same bytes in order either way.
    @Test func aSmallCopyIsReadAndWrittenByTheProcess() throws {
        let root = TestSupport.temporaryFolder("kcopy")
        let bytes = Self.media(size: 3 * fileChunkSize, seed: 14)
        try TestSupport.writeBytes(bytes, to: root + "/script.js")
        for count in [1, 4_096, 38_000, Int(OutputFile.smallestKernelCopy) - 1, Int(OutputFile.smallestKernelCopy)] {
            var observed = SHA256()
            let out = try OutputFile(creating: root + "/small-\(count).out", observer: { observed.update(bufferPointer: $0) })
            out.copiesInKernel = true
            try out.write([9, 8, 7])
            #expect(try out.append(from: try InputFile(path: root + "/script.js"), at: 100, count: UInt64(count)) == UInt64(count))
            try out.write([6])
            try out.close()
            let expected = [9, 8, 7] + bytes[100..<(100 + count)] + [6]
            #expect(out.kernelCopiedBytes == (UInt64(count) >= OutputFile.smallestKernelCopy ? UInt64(count) : 0), "\(count)")
            #expect(TestSupport.read(root + "/small-\(count).out") == expected, "\(count)")
            #expect(out.observedFinalBytes && Array(observed.finalize()) == Array(SHA256.hash(data: expected)), "\(count)")
        }
    }

    /// A source shorter than the count gives what it has (the caller reports it), whichever way.
    @Test func aShortSourceGivesWhatItHas() throws {
        let bytes = Self.media(size: 100_000, seed: 12)
        let root = TestSupport.temporaryFolder("kcopy")
        try TestSupport.writeBytes(bytes, to: root + "/clip.mp4")
        for kernel in [true, false] {
            let out = try OutputFile(creating: root + "/short-\(kernel).out")
            out.copiesInKernel = kernel
            #expect(try out.append(from: try InputFile(path: root + "/clip.mp4"), at: 1000, count: 200_000) == 99_000)
            try out.close()
            #expect(TestSupport.read(root + "/short-\(kernel).out") == Array(bytes[1000...]))
        }
    }

    /// A stored media file copied into an archive from the published file is the same archive,
    /// byte for byte, by the kernel, across file systems and by read/write; unzip -t and Python's
    /// zipfile read it; the hash an observer computes while writing is the file's.
    @Test func aCopiedStoredEntryGivesTheSameArchiveEveryWay() throws {
        let bytes = Self.media(size: 2 * fileChunkSize + 999, seed: 13)
        let text = Array(String(repeating: "<p>offline</p>\n", count: 500).utf8)
        let root = TestSupport.temporaryFolder("kcopy")
        let shm = try Self.otherFileSystemFolder()
        defer { try? FileManager.default.removeItem(atPath: shm) }
        try TestSupport.writeBytes(bytes, to: root + "/clip.mp4")
        try TestSupport.writeBytes(bytes, to: shm + "/clip.mp4")
        try TestSupport.writeBytes(text, to: root + "/page.html")
        let crc = CRC32.checksum(bytes)
        let size = UInt64(bytes.count)
        let out = TestSupport.temporaryFolder("kzip")
        try ZipWriter().write(
            [ZipEntry(name: "clip.mp4", source: .file(path: root + "/clip.mp4")), ZipEntry(name: "page.html", source: .file(path: root + "/page.html"))],
            to: out + "/reference.zip")
        var archives: [String] = []
        for (label, folder, kernel, unnamed) in [("kernel", root, true, true), ("named", root, true, false), ("exdev", shm, true, true), ("readwrite", root, false, true)] {
            let copied = CopiedEntry(path: folder + "/clip.mp4", offset: 0, method: .stored, crc32: crc, compressedSize: size, uncompressedSize: size)
            var hasher = SHA256()
            let path = out + "/\(label).zip"
            let result = try ZipWriter(unnamedFiles: unnamed, kernelCopies: kernel).write(
                [ZipEntry(name: "page.html", source: .bytes(text)), ZipEntry(name: "clip.mp4", source: .copied(copied))],
                to: path, observingBytes: { hasher.update(bufferPointer: $0) })
            #expect(TestSupport.read(path) == TestSupport.read(out + "/reference.zip"), "\(label)")
            #expect(result.observedAll, "\(label)")
            #expect(Array(hasher.finalize()) == Array(SHA256.hash(data: TestSupport.read(path))), "\(label)")
            archives.append(path)
        }
        #expect(try TestSupport.independentZipCheck(archives).isEmpty)
    }
}
