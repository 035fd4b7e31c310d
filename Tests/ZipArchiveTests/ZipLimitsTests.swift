import Foundation
import Testing
import TestSupport
import ZipArchive

/// What an archive declares about sizes and offsets is checked without arithmetic that can
/// wrap, and the zip-bomb ratio holds for every entry and for the archive as a whole.
@Suite struct ZipLimitsTests {
    @Test func aZIP64LocatorOffsetNearTwoToTheSixtyFourIsRefused() throws {
        let archive = try pythonArchive("""
            eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
            locator = struct.pack("<IIQI", 0x07064b50, 0, 2**64 - 16, 1)
            open(out, "wb").write(bytes(100) + locator + eocd)
            """)
        expectRefused(archive, containing: "ZIP64 record out of bounds")
    }

    /// A second entry whose ZIP64 sizes are 2^64 - 1 once wrapped the running total.
    @Test func entrySizesNearTwoToTheSixtyFourAreRefused() throws {
        let archive = try pythonArchive("""
            first = raw_zip([("a.txt", b"hello", 0, None)])
            cd_start = struct.unpack("<I", first[-6:-2])[0]
            body, cd = first[:cd_start], first[cd_start:-22]
            n = b"b.txt"
            extra = struct.pack("<HHQQ", 1, 16, 2**64 - 1, 2**64 - 1)
            cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031E, 45, 0x800, 0, 0, 33, 0, 0xFFFFFFFF, 0xFFFFFFFF, len(n), len(extra), 0, 0, 0, 0o100644 << 16, 0) + n + extra
            open(out, "wb").write(body + cd + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 2, 2, len(cd), len(body), 0))
            """)
        expectRefused(archive, containing: "entries total more than")
    }

    /// 2,048 entries of one MiB of zeros: 2 GiB from about 2 MB, each entry just at the size the
    /// ratio check used to start at.
    @Test func twoThousandOneMebibyteEntriesOfZerosAreRefused() throws {
        let archive = try pythonArchive("""
            data = bytes(1 << 20)
            payload = zlib.compress(data, 9)[2:-4]
            crc = zlib.crc32(data)
            body, cd = bytearray(), bytearray()
            for i in range(2048):
                n = f"zeros{i:04}.bin".encode()
                off = len(body)
                body += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, 0x800, 8, 0, 33, crc, len(payload), len(data), len(n), 0) + n + payload
                cd += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 0x031E, 20, 0x800, 8, 0, 33, crc, len(payload), len(data), len(n), 0, 0, 0, 0, 0o100644 << 16, off) + n
            open(out, "wb").write(bytes(body) + bytes(cd) + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 2048, 2048, len(cd), len(body), 0))
            """)
        #expect(TestSupport.read(archive).count < 4 << 20)
        expectRefused(archive, containing: "zip bomb")
    }

    /// Entries too small for the per-entry check (64 KiB of zeros each, within the allowance)
    /// still add up to a bomb: the ratio of the whole archive refuses it.
    @Test func manySmallCompressibleEntriesAreRefusedByTheTotalRatio() throws {
        let archive = try pythonArchive("""
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
                for i in range(4096):
                    z.writestr(f"z{i:04}.bin", bytes(64 << 10))
            """)
        expectRefused(archive, containing: "4096 entries claim")
    }

    /// What the ratio must not refuse: a page, an empty file and a small very compressible
    /// stylesheet, as real blocks hold them.
    @Test func ordinarySmallCompressibleEntriesPass() throws {
        let archive = TestSupport.temporaryFolder("zip") + "/page.zip"
        try ZipWriter().write([
            ZipEntry(name: "index.html", source: .bytes(Array(String(repeating: "<p>hello</p>\n", count: 4000).utf8))),
            ZipEntry(name: "empty.txt", source: .bytes([])),
            ZipEntry(name: "static/blank.css", source: .bytes(Array(repeating: 0x20, count: 60_000))),
        ], to: archive)
        let target = TestSupport.temporaryFolder("extract") + "/out"
        try ZipReader(path: archive).extract(into: target)
        #expect(TestSupport.read(target + "/static/blank.css").count == 60_000)
    }
}
