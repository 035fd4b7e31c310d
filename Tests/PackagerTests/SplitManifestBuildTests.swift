import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// Issue 33: every build writes the split manifest (parts, then `manifest.json`, then
/// `manifest-index.json`), which assembles exactly `manifest.json`, changes one part for a
/// one-block edit, and is the previous publish when `manifest.json` is not there.
@Suite(.serialized) struct SplitManifestBuildTests {
    /// The demo course: 266 html pages and more, enough for several parts.
    static func demoBuild() throws -> String {
        let (out, report) = try build(TestSupport.demoCourse)
        #expect(report.errors == [])
        return out
    }

    static func index(in out: String) throws -> ManifestIndex {
        try ManifestFile.decodeIndex(TestSupport.read(out + "/" + ManifestIndex.fileName), path: ManifestIndex.fileName)
    }

    static func partFiles(in out: String) -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: out + "/" + ManifestPart.folder)) ?? []).map { ManifestPart.folder + "/" + $0 })
    }

    @Test func theIndexAndItsPartsAssembleManifestJSON() throws {
        let out = try Self.demoBuild()
        let whole = try manifest(in: out)
        let index = try Self.index(in: out)
        try validate(out + "/" + ManifestIndex.fileName, against: "manifest-index.schema.json")
        #expect(index.parts.filter { $0.blocks > 0 }.count >= 2, "the demo course spans several block parts")
        #expect(Self.partFiles(in: out) == Set(index.parts.map(\.path)), "the folder holds exactly the parts the index names")
        for reference in index.parts {
            let bytes = TestSupport.read(out + "/" + reference.path)
            #expect(ManifestSplit.verify(bytes, as: reference), "\(reference.path) is what the index names")
            try validate(out + "/" + reference.path, against: "manifest-part.schema.json")
        }
        let published = try #require(try PublishedManifest.read(folder: out))
        let parts = try PublishedManifest.readParts(of: index, at: out) { relative throws(ManifestError) in
            try PublishedManifest.readFile(out + "/" + relative)
        }
        #expect(ManifestSplit.assemble(index, parts: parts) == whole)
        #expect(published.manifest == whole && published.hasWholeFile)
        #expect(try PublishVerifier.verify(folder: out).problems.isEmpty)
    }

    @Test func aOneBlockEditChangesTheIndexAndOnePartOnly() throws {
        let course = TestSupport.temporaryFolder("course")
        try TestSupport.copy(TestSupport.demoCourse, to: course)
        let (out, _) = try build(course)
        let indexBefore = TestSupport.read(out + "/" + ManifestIndex.fileName)
        let partsBefore = Self.partFiles(in: out)
        let page = try #require(FileManager.default.contentsOfDirectory(atPath: course + "/html").sorted().first { $0.hasSuffix(".html") })
        try TestSupport.write(["html/" + page: "<p>One edited page.</p>"], under: course)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.counts.built == 1, "\(report.counts)")
        let partsAfter = Self.partFiles(in: out)
        #expect(TestSupport.read(out + "/" + ManifestIndex.fileName) != indexBefore)
        #expect(partsBefore.subtracting(partsAfter).count == 1, "one part replaced: \(partsBefore.subtracting(partsAfter))")
        #expect(partsAfter.subtracting(partsBefore).count == 1, "by one new part: \(partsAfter.subtracting(partsBefore))")
        #expect(try PublishVerifier.verify(folder: out).problems.isEmpty)
    }

    /// Without `manifest.json` (as for a course too large for it), the index and its parts are
    /// the previous publish: nothing is built again, and `manifest.json` comes back unchanged.
    @Test func aRebuildWithoutManifestJSONReadsTheParts() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let whole = TestSupport.read(out + "/manifest.json")
        #expect(unlink(out + "/manifest.json") == 0)
        let published = try #require(try PublishedManifest.read(folder: out))
        let expected = try ManifestFile.decode(Data(whole), path: "manifest.json")
        #expect(!published.hasWholeFile && published.manifest == expected)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.counts.reused == 4 && report.counts.built == 0, "\(report.counts)")
        #expect(TestSupport.read(out + "/manifest.json") == whole, "the same manifest, with the previous publish time")
    }

    /// A file already under a new part's name (what a crash leaves of an unsynced write: empty,
    /// or cut short) is not trusted by its name: the build writes the part again.
    @Test(arguments: ["empty", "cut short"]) func aPartFileLeftByACrashIsWrittenAgain(_ damage: String) throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let before = Set(try Self.index(in: out).parts.map(\.path))
        try TestSupport.write(["html/a.html": "<p>Edited after the crash.</p>"], under: course)
        // The same edit built over a copy of `out` names the part the next build of `out` writes.
        let elsewhere = TestSupport.temporaryFolder("out")
        try TestSupport.copy(out, to: elsewhere)
        _ = try build(course, into: elsewhere, publishedAt: "2026-12-01T00:00:00Z")
        let newPart = try #require(try Self.index(in: elsewhere).parts.map(\.path).first { !before.contains($0) })
        let good = TestSupport.read(elsewhere + "/" + newPart)
        try TestSupport.writeBytes(damage == "empty" ? [] : Array(good.prefix(good.count / 2)), to: out + "/" + newPart)
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.errors == [])
        let written = TestSupport.read(out + "/" + newPart)
        #expect(written == good, "\(damage): the part is written again (\(written.count) bytes of \(good.count))")
        #expect(try PublishVerifier.verify(folder: out).problems.isEmpty)
    }

    /// A part that is not what the index names is refused as a previous publish, like a broken
    /// manifest, naming the part; nothing changes.
    @Test func aDamagedPartIsRefusedAsThePreviousPublish() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        #expect(unlink(out + "/manifest.json") == 0)
        let part = try #require(try Self.index(in: out).parts.first).path
        var bytes = TestSupport.read(out + "/" + part)
        bytes[bytes.count / 2] ^= 0x01
        try TestSupport.writeBytes(bytes, to: out + "/" + part)
        let before = TestSupport.files(under: out)
        let result = try TestSupport.coursepack(["build", course, "--out", out])
        #expect(result.status == 2 && result.stderr.contains(part) && result.stderr.contains("sha256"), "\(result.stderr)")
        #expect(TestSupport.files(under: out) == before)
    }

    /// Beside `manifest.json`, which is then the previous publish, a part the index names is
    /// named again only when the parts are exactly `manifest.json`'s blocks. A build that stopped
    /// after writing `manifest.json` left the index of the publish before, naming a part of the
    /// entries before the edit; a part may be damaged or gone. Each time the rebuild makes its
    /// parts again and the publish verifies.
    @Test(arguments: ["the index of the publish before", "a damaged part", "a part missing"])
    func besideManifestJSONOnlyPartsHoldingItsBlocksAreNamedAgain(_ damage: String) throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let earlierIndex = TestSupport.read(out + "/" + ManifestIndex.fileName)
        let earlierParts = try Self.index(in: out).parts.map { ($0.path, TestSupport.read(out + "/" + $0.path)) }
        try TestSupport.write(["html/a.html": "<p>Edited before the crash.</p>"], under: course)
        _ = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        let goodIndex = TestSupport.read(out + "/" + ManifestIndex.fileName)
        let part = try #require(try Self.index(in: out).parts.first { $0.blocks > 0 }).path
        switch damage {
        case "the index of the publish before":
            #expect(earlierIndex != goodIndex)
            for (path, bytes) in earlierParts { try TestSupport.writeBytes(bytes, to: out + "/" + path) }
            try TestSupport.writeBytes(earlierIndex, to: out + "/" + ManifestIndex.fileName)
        case "a damaged part":
            var bytes = TestSupport.read(out + "/" + part)
            bytes[bytes.count / 2] ^= 0x01
            try TestSupport.writeBytes(bytes, to: out + "/" + part)
        default:
            #expect(unlink(out + "/" + part) == 0)
        }
        let (_, report) = try build(course, into: out, publishedAt: "2026-12-01T00:00:00Z")
        #expect(report.errors == [] && report.counts.built == 0, "\(damage): \(report.counts)")
        #expect(TestSupport.read(out + "/" + ManifestIndex.fileName) == goodIndex, "\(damage): the index of the course built")
        let verified = try PublishVerifier.verify(folder: out)
        #expect(verified.problems.isEmpty, "\(damage): \(verified.problems)")
    }

    /// A folder as builders before the split form wrote it (manifest.json alone) is a complete
    /// publish: clients read manifest.json when there is no index.
    @Test func verifyAcceptsManifestJSONAlone() throws {
        let (out, _) = try build(try fourBlockCourse())
        try TestSupport.removeSplitManifest(out)
        let result = try PublishVerifier.verify(folder: out)
        #expect(result.problems.isEmpty, "\(result.problems)")
    }

    @Test func verifyReportsADamagedMissingOrDisagreeingPart() throws {
        let course = try fourBlockCourse()
        let (out, _) = try build(course)
        let part = try #require(try Self.index(in: out).parts.first).path
        let good = TestSupport.read(out + "/" + part)
        var bytes = good
        bytes[bytes.count / 2] ^= 0x01
        try TestSupport.writeBytes(bytes, to: out + "/" + part)
        let damaged = try PublishVerifier.verify(folder: out)
        #expect(damaged.problems.contains { $0.file == part && $0.message.contains("sha256") }, "\(damaged.problems)")

        #expect(unlink(out + "/" + part) == 0)
        let missing = try PublishVerifier.verify(folder: out)
        #expect(missing.problems.contains { $0.file == part && $0.message.contains("missing") }, "\(missing.problems)")

        // Parts intact, manifest.json from another build: they disagree.
        try TestSupport.writeBytes(good, to: out + "/" + part)
        var other = try manifest(in: out)
        other.generator = "another generator"
        try ManifestFile.write(other, to: out + "/manifest.json")
        let disagreeing = try PublishVerifier.verify(folder: out)
        #expect(disagreeing.problems.contains { $0.file == ManifestIndex.fileName && $0.message.contains("generator") }, "\(disagreeing.problems)")

        let cli = try TestSupport.coursepack(["verify", out])
        #expect(cli.status == 1 && cli.stderr.contains("CP330") && cli.stderr.contains(ManifestIndex.fileName), "\(cli.stderr)")
    }
}

/// Validates a JSON file against one of the schemas in schema/ with Python's jsonschema.
func validate(_ path: String, against schema: String) throws {
    let python = try #require(TestSupport.which("python3"))
    let script = """
        import json, sys
        import jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        jsonschema.validate(json.load(open(sys.argv[2])), schema, cls=jsonschema.Draft202012Validator)
        """
    let result = try TestSupport.run(python, ["-c", script, TestSupport.packageRoot + "/schema/" + schema, path])
    #expect(result.status == 0, "\(path) does not match schema/\(schema): \(result.stderr)")
}
