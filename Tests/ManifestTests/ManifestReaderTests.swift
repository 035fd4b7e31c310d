import Foundation
import Testing
import TestSupport

@testable import Manifest

/// `ManifestFile.decode` reads manifests with a fast reader of its own and falls back to
/// JSONDecoder on anything that reader does not take; whatever the bytes, the result must be
/// JSONDecoder's.
@Suite struct ManifestReaderTests {
    /// Every field the schema has, with text that needs escaping.
    static var everyField: CourseManifest {
        var withGroups = BlockEntry(
            usageID: "block-v1:O+N+R+type@html+block@a", type: "html", displayName: "Quote \" slash / tab \t é 🎓", parents: ["p1", "p2"],
            archive: "html/a.zip", size: 123, sha256: "aa", contentHash: "cc", lastModified: "2026-11-22T10:00:00Z",
            requiresNetwork: ["https://example.com/x.js"], runtime: "runtime/0123456789abcdef.zip")
        withGroups.groupAccess = ["50": [1, 2], "7": []]
        withGroups.splitTest = SplitTestGroupEntry(usageID: "split", userPartitionID: 50, groupID: 2)
        // Listings the two blocks share in part (the reader keeps one copy of a repeated string).
        let (page, style) = (String(repeating: "a1", count: 32), String(repeating: "b2", count: 32))
        withGroups.files = ["index.html": page, "static/css/course-style.css": style]
        withGroups.unpackedSize = 456
        withGroups.downloadURL(base: "https://cdn.example.com")
        var noGroup = withGroups
        noGroup.usageID = "block-v1:O+N+R+type@html+block@b"
        noGroup.splitTest = SplitTestGroupEntry(usageID: "split", userPartitionID: 50, groupID: nil)
        noGroup.files = ["index.html": String(repeating: "c3", count: 32), "static/css/course-style.css": style]
        let online = BlockEntry(usageID: "online", type: "lti", displayName: nil, parents: [], offline: false, reason: "needs the LMS")
        var manifest = CourseManifest(
            courseID: "course-v1:O+N+R", publishedAt: "2026-11-22T10:00:00Z", generator: "coursepack test", blocks: [withGroups, noGroup, online],
            runtime: SharedArchive(archive: "runtime/0123456789abcdef.zip", size: 9_000_000_000, sha256: "rr", contentHash: "rc"))
        manifest.outline = [
            OutlineEntry(usageID: "course", type: "course", displayName: "Course \\ name", children: ["chapter"]),
            OutlineEntry(usageID: "chapter", type: "chapter", displayName: nil, children: []),
        ]
        manifest.search = SharedArchive(archive: "search/0123456789abcdef.zip", size: 5, sha256: "ss", contentHash: "sc")
        manifest.search?.files = ["index.js": String(repeating: "d4", count: 32)]
        manifest.files = [
            page: CourseFile(size: 10, compressedSize: 8, encoding: .gzip), style: CourseFile(size: 7, compressedSize: 7, encoding: nil),
        ]
        return manifest
    }

    static func reference(_ bytes: [UInt8]) -> CourseManifest? {
        guard let manifest = try? JSONDecoder().decode(CourseManifest.self, from: Data(bytes)),
            manifest.schemaVersion <= CourseManifest.currentSchemaVersion
        else { return nil }
        return manifest
    }

    @Test func aManifestWithEveryFieldReadsAsWritten() throws {
        let manifest = Self.everyField
        let bytes = Array(ManifestFile.encode(manifest))
        let text = String(decoding: bytes, as: UTF8.self)
        for field in ["\"files\"", "\"offline_download\"", "\"unpacked_size\"", "\"group_access\"", "\"split_test\""] {
            #expect(text.contains(field), "the manifest has \(field)")
        }
        #expect(try ManifestFile.decode(Data(bytes), path: "m") == manifest)
        #expect(Self.reference(bytes) == manifest)
    }

    /// A reader of everything but the blocks (the search index, the course id) gets what the
    /// whole read gets, less the blocks, whatever their text (escapes, `\u` sequences, brackets
    /// and quotes inside strings); blocks that are not well-formed JSON make it fail as the
    /// whole read fails, never read as a course without blocks.
    @Test func theManifestWithoutItsBlocksIsTheManifestLessItsBlocks() throws {
        var manifest = Self.everyField
        manifest.blocks[0].displayName = "brackets ] } [ { \"quoted\" \\ back\\slash \u{1} \u{7f} 🎓 \u{2028}"
        let folder = TestSupport.temporaryFolder("without-blocks")
        let path = folder + "/manifest.json"
        try ManifestFile.write(manifest, to: path)
        var expected = manifest
        expected.blocks = []
        #expect(try ManifestFile.readWithoutBlocks(path) == expected)
        #expect(ManifestReader.manifestWithoutBlocks(Array(ManifestFile.encode(manifest))) == expected, "by passing over the blocks")

        let text = String(decoding: ManifestFile.encode(manifest), as: UTF8.self)
        let damaged = [
            ("an escape JSON has not", text.replacingOccurrences(of: "back\\\\slash", with: "back\\qslash")),
            ("a raw control byte", text.replacingOccurrences(of: "\\u0001", with: "\u{1}")),
            ("an unclosed array", text.replacingOccurrences(of: "\"parents\" : [", with: "\"parents\" : [[")),
            ("a fraction", text.replacingOccurrences(of: "\"size\" : 123", with: "\"size\" : 1.5")),
        ]
        for (what, bytes) in damaged {
            #expect(bytes != text, "\(what): the test changed the manifest")
            try bytes.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(ManifestReader.manifestWithoutBlocks(Array(bytes.utf8)) == nil, "\(what)")
            #expect(throws: ManifestError.self, "\(what)") { try ManifestFile.readWithoutBlocks(path) }
            #expect(throws: ManifestError.self, "\(what): the whole read refuses it too") { try ManifestFile.read(path) }
        }
    }

    /// A string the blocks repeat (a listed file's path and content key, a date) is read into one
    /// copy: at 100,000 blocks a rebuild's previous publish lists half a million files of a few
    /// thousand contents, and a copy each was a quarter of the rebuild's memory.
    @Test func stringsTheBlocksRepeatAreKeptOnce() throws {
        let read = try ManifestFile.decode(ManifestFile.encode(Self.everyField), path: "m")
        let (first, second) = (read.blocks[0], read.blocks[1])
        func storage(_ string: String) -> UnsafeRawPointer? {
            string.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
        }
        let path = "static/css/course-style.css"
        let firstPath = try #require(first.files?.keys.first { $0 == path }), secondPath = try #require(second.files?.keys.first { $0 == path })
        #expect(storage(firstPath) != nil && storage(firstPath) == storage(secondPath), "one copy of the path")
        let firstKey = try #require(first.files?[path]), secondKey = try #require(second.files?[path])
        #expect(storage(firstKey) != nil && storage(firstKey) == storage(secondKey), "one copy of the content key")
        let firstDate = try #require(first.lastModified), secondDate = try #require(second.lastModified)
        #expect(storage(firstDate) == storage(secondDate), "one copy of the date")
    }

    /// Swift's `==` on strings is canonical equivalence: "café" written precomposed (NFC) and
    /// decomposed (NFD) are equal, though their bytes differ. A string kept once must be kept
    /// per exact bytes, or one block's URL or path came back as another block's bytes.
    @Test func stringsKeptOnceKeepTheirExactBytes() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8), "the two spellings this test is about")
        var manifest = Self.everyField
        for (index, spelling) in [(0, composed), (1, decomposed)] {
            manifest.blocks[index].requiresNetwork = ["https://video.example.com/" + spelling]
            manifest.blocks[index].parents = ["unit-" + spelling]
            manifest.blocks[index].files = ["static/" + spelling + ".css": String(repeating: "a", count: 64)]
        }
        let read = try ManifestFile.decode(ManifestFile.encode(manifest), path: "m")
        for index in [0, 1] {
            let written = manifest.blocks[index], back = read.blocks[index]
            #expect(back.requiresNetwork.map { $0.map { Array($0.utf8) } } == written.requiresNetwork.map { $0.map { Array($0.utf8) } })
            #expect(back.parents.map { Array($0.utf8) } == written.parents.map { Array($0.utf8) })
            #expect(back.files.map { $0.keys.map { Array($0.utf8) } } == written.files.map { $0.keys.map { Array($0.utf8) } })
        }
    }

    /// Bytes changed at random: valid JSON of other values, other types, broken JSON. The
    /// result (or the failure) is always JSONDecoder's.
    @Test func damagedManifestsReadAsJSONDecoderReadsThem() throws {
        let original = Array(ManifestFile.encode(Self.everyField))
        let replacements = Array("\"{}[],:0123456789-.eE\\/ntrufalsxyzé".utf8) + [0x00, 0x0A, 0xFF]
        var random = SeededGenerator(state: 23)
        var accepted = 0
        for round in 0..<3000 {
            var bytes = original
            for _ in 0...(round % 3) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.remove(at: index)
                case 1: bytes.insert(replacements.randomElement(using: &random)!, at: index)
                default: bytes[index] = replacements.randomElement(using: &random)!
                }
            }
            let expected = Self.reference(bytes)
            let read = try? ManifestFile.decode(Data(bytes), path: "m")
            #expect(read == expected, "round \(round): \(String(decoding: bytes, as: UTF8.self).prefix(0))")
            if read != nil { accepted += 1 }
        }
        // Some of the changes must have left valid manifests, or the test proves little.
        #expect(accepted > 100)
    }

    @Test func numbersAndEscapesAtTheirEdges() throws {
        let base = String(decoding: ManifestFile.encode(Self.everyField), as: UTF8.self)
        let manyKeys = (0..<40).map { "\"k\($0)\" : \($0), " }.joined()
        for (from, to) in [
            ("\"size\" : 123", "\"size\" : 18446744073709551615"), ("\"size\" : 123", "\"size\" : 18446744073709551616"),
            ("\"size\" : 123", "\"size\" : -1"), ("\"size\" : 123", "\"size\" : 1.0"), ("\"size\" : 123", "\"size\" : 1e2"),
            ("\"size\" : 123", "\"size\" : 0123"), ("\"user_partition_id\" : 50", "\"user_partition_id\" : -9223372036854775808"),
            ("\"schema_version\" : 2", "\"schema_version\" : 3"), ("\"schema_version\" : 2", "\"schema_version\" : 1"),
            ("\"type\" : \"html\"", "\"type\" : \"h\\u00e9\\ud83c\\udf93\\/\""), ("\"type\" : \"html\"", "\"type\" : \"\\ud83c\""),
            ("\"type\" : \"html\"", "\"type\" : null"), ("\"reason\" : \"needs the LMS\"", "\"reason\" : null"),
            ("\"course_id\"", "\"unknown\" : [1, {\"a\" : null}], \"course_id\""), ("\"course_id\"", "\"generator\" : \"twice\", \"course_id\""),
            // Past a few dozen keys, duplicates are found another way: still refused alike.
            ("\"course_id\"", manyKeys + "\"generator\" : \"twice\", \"course_id\""), ("\"course_id\"", manyKeys + "\"course_id\""),
            ("\"course_id\"", manyKeys + "\"k3\" : 1, \"course_id\""),
        ] {
            let bytes = Array(base.replacingOccurrences(of: from, with: to).utf8)
            #expect((try? ManifestFile.decode(Data(bytes), path: "m")) == Self.reference(bytes), "\(to)")
        }
    }
}
