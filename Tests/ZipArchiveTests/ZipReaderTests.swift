import Foundation
import Testing
import TestSupport
import ZipArchive

/// Runs a Python snippet that writes a (possibly hostile) archive to `argv[1]`.
func pythonArchive(_ script: String, name: String = "a.zip") throws -> String {
    let path = TestSupport.temporaryFolder("hostile") + "/" + name
    let prelude = """
        import struct, sys, zlib, zipfile
        out = sys.argv[1]
        def raw_zip(entries, central=None):
            # entries: list of (name, data, method, declared_size or None); returns archive bytes
            body, cd = b"", b""
            for name, data, method, declared in entries:
                n = name.encode()
                payload = zlib.compress(data)[2:-4] if method == 8 else data
                crc = zlib.crc32(data)
                size = len(data) if declared is None else declared
                extra = b""
                usize32 = size
                if size >= 0xFFFFFFFF:
                    extra = struct.pack("<HHQ", 1, 8, size); usize32 = 0xFFFFFFFF
                off = len(body)
                body += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0x800, method, 0, 33, crc, len(payload), min(size, 0xFFFFFFFF), len(n), 0) + n + payload
                cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031E, 45 if extra else 20, 0x800, method, 0, 33, crc, len(payload), usize32, len(n), len(extra), 0, 0, 0, 0o100644 << 16, off) + n + extra
            if central is not None: cd = central(cd)
            count = len(entries)
            return body + cd + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, count, count, len(cd), len(body), 0)

        """
    let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", prelude + script, path])
    #expect(result.status == 0, "\(result.stderr)")
    return path
}

/// Refused from the file and from memory (a sync unpacks small downloads from memory), for
/// the same reason, naming the archive, leaving nothing behind.
func expectRefused(_ archive: String, containing reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
    for fromMemory in [false, true] {
        let target = TestSupport.temporaryFolder("extract") + "/out"
        do {
            let reader = fromMemory ? try ZipReader(bytes: TestSupport.read(archive), path: archive) : try ZipReader(path: archive)
            try reader.extract(into: target)
            Issue.record("\(archive) was extracted (from memory: \(fromMemory))", sourceLocation: sourceLocation)
        } catch {
            #expect("\(error)".contains(reason), "\(error)", sourceLocation: sourceLocation)
            #expect("\(error)".contains(archive), "the message names the archive", sourceLocation: sourceLocation)
        }
        #expect(!FileManager.default.fileExists(atPath: target), "nothing is left of a refused extraction", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: (archive as NSString).deletingLastPathComponent + "/evil.txt"), sourceLocation: sourceLocation)
    }
}

@Suite struct ZipReaderTests {
    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomTreesRoundTripThroughWriterAndReader(seed: UInt64) throws {
        let root = TestSupport.temporaryFolder("tree")
        let names = try randomTree(seed: seed, under: root)
        let archive = TestSupport.temporaryFolder("zip") + "/tree.zip"
        try ZipWriter().write(names.map { ZipEntry(name: $0, source: .file(path: root + "/" + $0)) }, to: archive)
        let target = TestSupport.temporaryFolder("extract") + "/out"
        let reader = try ZipReader(path: archive)
        try reader.verify()
        try reader.extract(into: target)
        #expect(TestSupport.files(under: target) == names.sorted())
        for name in names {
            #expect(TestSupport.read(target + "/" + name) == TestSupport.read(root + "/" + name), "\(name)")
        }
        // The same archive unpacked from memory, as a sync does with a small download.
        let fromMemory = TestSupport.temporaryFolder("extract") + "/memory"
        let inMemory = try ZipReader(bytes: TestSupport.read(archive), path: archive)
        #expect(inMemory.entries == reader.entries)
        try inMemory.extract(into: fromMemory)
        #expect(TestSupport.files(under: fromMemory) == names.sorted())
        for name in names {
            #expect(TestSupport.read(fromMemory + "/" + name) == TestSupport.read(root + "/" + name), "\(name)")
        }
    }

    @Test func readsArchivesWrittenByPythonWithFolders() throws {
        let archive = try pythonArchive("""
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("dir/", "")
                z.writestr("dir/a.txt", "hello " * 1000)
                z.writestr("b.bin", bytes(range(256)), compress_type=zipfile.ZIP_STORED)
            """)
        let target = TestSupport.temporaryFolder("extract") + "/out"
        try ZipReader(path: archive).extract(into: target)
        #expect(TestSupport.files(under: target) == ["b.bin", "dir/a.txt"])
        #expect(TestSupport.read(target + "/dir/a.txt") == Array(String(repeating: "hello ", count: 1000).utf8))
    }

    @Test(arguments: [
        ("../evil.txt", "contains a .. component"),
        ("/tmp/evil.txt", "absolute path"),
        ("a/../../evil.txt", "contains a .. component"),
        ("C:/evil.txt", "drive letter"),
        ("a\\\\..\\\\evil.txt", "backslash"),
    ])
    func zipSlipNamesAreRefused(name: String, reason: String) throws {
        let archive = try pythonArchive("""
            open(out, "wb").write(raw_zip([("ok.txt", b"fine", 0, None), ("\(name)", b"evil", 0, None)]))
            """)
        expectRefused(archive, containing: reason)
    }

    @Test func symlinksAndDuplicatesAreRefused() throws {
        let link = try pythonArchive("""
            with zipfile.ZipFile(out, "w") as z:
                info = zipfile.ZipInfo("link")
                info.create_system = 3
                info.external_attr = (0o120777 << 16)
                z.writestr(info, "/etc/passwd")
            """)
        expectRefused(link, containing: "symbolic link")
        let duplicate = try pythonArchive("""
            open(out, "wb").write(raw_zip([("a.txt", b"one", 0, None), ("a.txt", b"two", 0, None)]))
            """)
        expectRefused(duplicate, containing: "appears twice")
    }

    @Test func aSmallEntryClaimingTenGigabytesIsRefused() throws {
        let archive = try pythonArchive("""
            open(out, "wb").write(raw_zip([("bomb.txt", b"x" * 1024, 8, 10 * 1024**3)]))
            """)
        expectRefused(archive, containing: "zip bomb")
    }

    @Test func anEntryThatInflatesPastItsDeclaredSizeIsStopped() throws {
        let archive = try pythonArchive("""
            open(out, "wb").write(raw_zip([("liar.txt", b"y" * 5_000_000, 8, 1000)]))
            """)
        expectRefused(archive, containing: "expands past its declared")
    }

    /// Fifield-style: many directory entries share one compressed payload.
    @Test func overlappingEntriesAreRefused() throws {
        let archive = try pythonArchive("""
            data = raw_zip([("a.txt", b"z" * 100_000, 8, None)])
            cd_start = struct.unpack("<I", data[-6:-2])[0]
            body, cd = data[:cd_start], data[cd_start:-22]
            second = cd.replace(b"a.txt", b"b.txt")
            cd2 = cd + second
            open(out, "wb").write(body + cd2 + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 2, 2, len(cd2), len(body), 0))
            """)
        expectRefused(archive, containing: "overlap")
    }

    /// 42.zip-style nesting: the reader never opens archives inside archives, so the outer
    /// layer extracts to its small stored files, and the inner bomb is refused when read.
    @Test func nestedBombsNeverExpand() throws {
        let inner = try pythonArchive("""
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
                for i in range(4):
                    z.writestr(f"zeros{i}.bin", bytes(64 << 20))
            """, name: "inner.zip")
        let outer = try pythonArchive("""
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
                for i in range(16):
                    z.write(sys.argv[2] if len(sys.argv) > 2 else "\(inner)", f"layer{i}.zip")
            """, name: "outer.zip")
        let target = TestSupport.temporaryFolder("extract") + "/out"
        try ZipReader(path: outer).extract(into: target)
        let written = TestSupport.files(under: target).reduce(0) { $0 + TestSupport.read(target + "/" + $1).count }
        #expect(written < 16 * 1 << 20, "only the outer layer is written: \(written) bytes")
        expectRefused(inner, containing: "zip bomb")
    }

    @Test func truncatedArchivesAndCRCMismatchesAreRefused() throws {
        let folder = TestSupport.temporaryFolder("zip")
        let good = folder + "/good.zip"
        try ZipWriter().write([
            ZipEntry(name: "a.txt", source: .bytes(Array(String(repeating: "abc", count: 1000).utf8))),
            ZipEntry(name: "b.png", source: .bytes(Array(repeating: 7, count: 5000))),
        ], to: good)
        let bytes = TestSupport.read(good)
        for cut in [bytes.count - 10, bytes.count - 60, bytes.count / 2, 10] {
            let path = folder + "/cut-\(cut).zip"
            try TestSupport.writeBytes(Array(bytes.prefix(cut)), to: path)
            expectRefused(path, containing: path)
        }
        // Flip a byte of b.png's stored data: the CRC no longer matches.
        var damaged = bytes
        let dataStart = try #require(damaged.indices.first { damaged[$0] == 7 && damaged[$0 + 1] == 7 && damaged[$0 + 2] == 7 })
        damaged[dataStart + 100] = 8
        try TestSupport.writeBytes(damaged, to: folder + "/crc.zip")
        expectRefused(folder + "/crc.zip", containing: "CRC-32")
    }
}
