import Foundation
import Manifest
import Testing
import TestSupport

/// The manifest's bytes are a contract; these tests hold the hand-written layout to the one
/// Foundation's JSONEncoder gives, and to what the decoder reads back.
@Suite struct CanonicalJSONTests {
    static let pieces = ["a", "html/x.zip", "quote\"", "back\\slash", "/slash/", "tab\t", "nl\n", "cr\r", "\u{1}", "\u{1f}", "\u{8}\u{c}",
                         "\u{7f}", "é", "日本語", "\u{2028}", "😀", "<script>&amp;", " ", ""]

    static func text(_ rng: inout SeededGenerator) -> String {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    static func manifest(seed: UInt64) -> CourseManifest {
        var rng = SeededGenerator(state: seed)
        var blocks: [BlockEntry] = []
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            let offline = Bool.random(using: &rng)
            var block = BlockEntry(
                usageID: text(&rng), type: text(&rng), displayName: Bool.random(using: &rng) ? text(&rng) : nil,
                parents: (0..<Int.random(in: 0...3, using: &rng)).map { _ in text(&rng) },
                archive: offline ? text(&rng) : nil, size: offline ? UInt64.random(in: 0...UInt64.max, using: &rng) : nil,
                sha256: offline ? text(&rng) : nil, contentHash: offline ? text(&rng) : nil,
                lastModified: offline ? text(&rng) : nil, offline: offline ? nil : false,
                reason: offline ? nil : text(&rng),
                requiresNetwork: Bool.random(using: &rng) ? (0..<Int.random(in: 0...2, using: &rng)).map { _ in text(&rng) } : nil)
            if Bool.random(using: &rng) { block.offline = Bool.random(using: &rng) }
            if Bool.random(using: &rng) {
                // Partition ids whose decimal strings sort differently as text and as numbers.
                let partitions = ["0", "2", "10", "18587404", "-1"].filter { _ in Bool.random(using: &rng) }
                block.groupAccess = Dictionary(uniqueKeysWithValues: partitions.map { partition in
                    (partition, (0..<Int.random(in: 0...3, using: &rng)).map { _ in Int.random(in: -5...Int.max, using: &rng) })
                })
            }
            if Bool.random(using: &rng) {
                block.splitTest = SplitTestGroupEntry(
                    usageID: text(&rng), userPartitionID: Int.random(in: Int.min...Int.max, using: &rng),
                    groupID: Bool.random(using: &rng) ? Int.random(in: 0...9, using: &rng) : nil)
            }
            if Bool.random(using: &rng) {
                block.files = listing(&rng)
                block.unpackedSize = UInt64.random(in: 0...UInt64.max, using: &rng)
            }
            blocks.append(block)
        }
        var manifest = CourseManifest(courseID: text(&rng), publishedAt: text(&rng), generator: text(&rng), blocks: blocks)
        if Bool.random(using: &rng) {
            manifest.outline = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                OutlineEntry(
                    usageID: text(&rng), type: text(&rng), displayName: Bool.random(using: &rng) ? text(&rng) : nil,
                    children: (0..<Int.random(in: 0...3, using: &rng)).map { _ in text(&rng) })
            }
        }
        if Bool.random(using: &rng) {
            var search = SharedArchive(archive: text(&rng), size: UInt64.random(in: 0...99, using: &rng), sha256: text(&rng), contentHash: text(&rng))
            if Bool.random(using: &rng) { search.files = listing(&rng) }
            if Bool.random(using: &rng) { search.unpackedSize = UInt64.random(in: 0...UInt64.max, using: &rng) }
            manifest.search = search
        }
        if Bool.random(using: &rng) {
            manifest.files = Dictionary((0..<Int.random(in: 0...4, using: &rng)).map { _ in
                (String(format: "%016llx", UInt64.random(in: 0...UInt64.max, using: &rng)), CourseFile(
                    size: UInt64.random(in: 0...UInt64.max, using: &rng), compressedSize: UInt64.random(in: 0...9, using: &rng),
                    encoding: Bool.random(using: &rng) ? .gzip : nil))
            }, uniquingKeysWith: { first, _ in first })
        }
        return manifest
    }

    /// A folder listing: paths (ASCII, as course file paths mostly are) to content keys.
    static func listing(_ rng: inout SeededGenerator) -> FileListing {
        let paths = ["index.html", "coursepack.css", "static/a b.png", "static/Z.js", "static/z/0.css", "static/_x", "static/~"]
        return Dictionary(paths.filter { _ in Bool.random(using: &rng) }.map { ($0, text(&rng)) }, uniquingKeysWith: { first, _ in first })
    }

    @Test(arguments: 0..<200 as Range<UInt64>)
    func sameBytesAsFoundationAndReadBackEqual(seed: UInt64) throws {
        let manifest = Self.manifest(seed: seed)
        let bytes = ManifestFile.encode(manifest)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var reference = try encoder.encode(manifest)
        reference.append(UInt8(ascii: "\n"))
        #expect(bytes == reference, "\(String(decoding: bytes, as: UTF8.self))\n---\n\(String(decoding: reference, as: UTF8.self))")
        #expect(try ManifestFile.decode(bytes, path: "manifest.json") == manifest)
    }
}
