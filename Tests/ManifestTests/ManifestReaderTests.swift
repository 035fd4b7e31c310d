import Foundation
import Manifest
import Testing
import TestSupport

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
        var noGroup = withGroups
        noGroup.usageID = "block-v1:O+N+R+type@html+block@b"
        noGroup.splitTest = SplitTestGroupEntry(usageID: "split", userPartitionID: 50, groupID: nil)
        let online = BlockEntry(usageID: "online", type: "lti", displayName: nil, parents: [], offline: false, reason: "needs the LMS")
        var manifest = CourseManifest(
            courseID: "course-v1:O+N+R", publishedAt: "2026-11-22T10:00:00Z", generator: "coursepack test", blocks: [withGroups, noGroup, online],
            runtime: SharedArchive(archive: "runtime/0123456789abcdef.zip", size: 9_000_000_000, sha256: "rr", contentHash: "rc"))
        manifest.outline = [
            OutlineEntry(usageID: "course", type: "course", displayName: "Course \\ name", children: ["chapter"]),
            OutlineEntry(usageID: "chapter", type: "chapter", displayName: nil, children: []),
        ]
        manifest.search = SharedArchive(archive: "search/0123456789abcdef.zip", size: 5, sha256: "ss", contentHash: "sc")
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
        #expect(try ManifestFile.decode(Data(bytes), path: "m") == manifest)
        #expect(Self.reference(bytes) == manifest)
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
