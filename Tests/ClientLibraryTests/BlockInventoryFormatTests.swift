import Foundation
@testable import SyncClient
import Testing
import TestSupport

/// No file name can break an inventory (issue 29, finding 11): names are escaped in format 2,
/// and an inventory that cannot be read is reported, never taken as "nothing to check".
@Suite struct BlockInventoryFormatTests {
    static let sha = String(repeating: "ab", count: 32)

    @Test func everyNameRoundTripsThroughTheFile() throws {
        var names = (0..<0x20).map { "a\(Character(Unicode.Scalar($0)!))b" }
        names += ["a\u{7F}b", "a\u{85}b", "a\u{9F}b", "100%.txt", "%0A", "caf\u{E9}/\u{1F600}.html", "tab\tand\nnewline\r.css", "a b"]
        let inventory = BlockInventory(files: names.enumerated().map { .init(name: $1, size: UInt64($0), crc32: UInt32($0) * 7) }, archiveSHA256: Self.sha)
        let folder = TestSupport.temporaryFolder("inventory")
        let path = BlockInventory.path(stateFolder: folder, blockFolder: "html/x", archiveSHA256: Self.sha)
        try inventory.write(to: path)
        let text = TestSupport.read(path)
        #expect(text.filter { $0 == UInt8(ascii: "\n") }.count == names.count + 2, "one line per file, a header and the archive")
        #expect(!text.contains { $0 < 0x20 && $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\t") } && !text.contains(0x7F))
        #expect(BlockInventory.read(stateFolder: folder, blockFolder: "html/x", archiveSHA256: Self.sha) == inventory)
    }

    @Test func aDamagedOrForeignInventoryIsReportedAndAFormatOneInventoryStillReads() throws {
        let folder = TestSupport.temporaryFolder("inventory")
        try TestSupport.write(["block/index.html": "<p>x</p>"], under: folder)
        let path = BlockInventory.path(stateFolder: folder + "/state", blockFolder: "html/x", archiveSHA256: Self.sha)
        try FileManager.default.createDirectory(atPath: folder + "/state/files", withIntermediateDirectories: true)
        for (text, reason) in [("garbage\n", "cannot be read"), ("coursepack-inventory 2\narchive\t\(Self.sha)\n0\t1\tbad%zz\n", "cannot be read"),
                               ("coursepack-inventory 2\narchive\t\(Self.sha)\n0\t1\tcut", "cannot be read"),
                               ("coursepack-inventory 2\narchive\t\(String(repeating: "cd", count: 32))\n", "names another archive")] {
            try TestSupport.write([path.replacingOccurrences(of: folder + "/", with: ""): text], under: folder)
            let damage = BlockInventory.damage(courseRoot: folder, stateFolder: folder + "/state", blockFolder: "html/x", archiveSHA256: Self.sha)
            #expect(damage?.contains(reason) == true, "\(text): \(damage ?? "nil")")
        }
        unlink(path)
        // Format 1 (no header, raw names), as targets synced before kept it.
        try TestSupport.write(["state/files/html_x.tsv": "\(String(0x2a3b4c5d, radix: 16))\t8\tindex.html\n"], under: folder)
        let legacy = try #require(BlockInventory.read(stateFolder: folder + "/state", blockFolder: "html/x", archiveSHA256: Self.sha))
        #expect(legacy.files == [.init(name: "index.html", size: 8, crc32: 0x2a3b_4c5d)] && legacy.archiveSHA256 == nil)
        #expect(BlockInventory.damage(courseRoot: folder, stateFolder: folder + "/state", blockFolder: "nothing/here", archiveSHA256: Self.sha) == nil,
            "nothing recorded: a migrated target, nothing to compare")
    }

    @Test func removingOldInventoriesKeepsTheNamedOneAndTouchesNoOtherFolder() throws {
        let state = TestSupport.temporaryFolder("inventory")
        let other = String(repeating: "cd", count: 32)
        let names = ["html_x.\(Self.sha.prefix(16)).tsv", "html_x.\(other.prefix(16)).tsv", "html_x.tsv",
                     "html_x.y.\(Self.sha.prefix(16)).tsv", "html_x.y.tsv", "html_z.\(other.prefix(16)).tsv"]
        try TestSupport.write(Dictionary(uniqueKeysWithValues: names.map { ("files/" + $0, "") }), under: state)
        BlockInventory.removeOthers(stateFolder: state, keeping: ["html/x": Self.sha, "html/z": nil])
        let left = try FileManager.default.contentsOfDirectory(atPath: state + "/files").sorted()
        #expect(left == ["html_x.\(Self.sha.prefix(16)).tsv", "html_x.y.\(Self.sha.prefix(16)).tsv", "html_x.y.tsv"])
    }
}
