import FileSystem
import Foundation
import Manifest
import Synchronization
import Testing

@Suite struct ManifestPartsTests {
    /// A course of `count` blocks, each listing its own page and one style sheet all share.
    static func manifest(blocks count: Int, containers: Int = 0) -> CourseManifest {
        let shared = String(repeating: "a", count: 64)
        var files: [String: CourseFile] = [shared: CourseFile(size: 900, compressedSize: 300, encoding: .gzip)]
        var blocks: [BlockEntry] = []
        for number in 0..<count {
            let page = SHA256Hex.of(Array("page \(number)".utf8))
            files[page] = CourseFile(size: UInt64(1000 + number), compressedSize: UInt64(400 + number), encoding: .gzip)
            var block = BlockEntry(
                usageID: "block-v1:Org+Course+Run+type@html+block@b\(number)", type: "html", displayName: "Page \(number)",
                parents: ["block-v1:Org+Course+Run+type@vertical+block@v\(number / 4)"], archive: "html/b\(number).zip", size: 500,
                sha256: page, contentHash: page, lastModified: "2026-11-22T10:00:00Z")
            block.files = ["index.html": page, "static/style.css": shared]
            block.unpackedSize = UInt64(1900 + number)
            blocks.append(block)
        }
        var manifest = CourseManifest(courseID: "course-v1:Org+Course+Run", publishedAt: "2026-11-22T10:00:00Z", generator: "test", blocks: blocks)
        manifest.outline = (0..<containers).map { number in
            OutlineEntry(usageID: "block-v1:Org+Course+Run+type@vertical+block@v\(number)", type: "vertical", displayName: nil,
                         children: (0..<4).map { "block-v1:Org+Course+Run+type@html+block@b\(number * 4 + $0)" })
        }
        manifest.files = files
        return manifest
    }

    static func decoded(_ split: SplitManifest) throws -> (ManifestIndex, [ManifestPart]) {
        let indexBytes = ManifestFile.encode(split.index)
        let index = try ManifestFile.decodeIndex(indexBytes, path: "manifest-index.json")
        var parts: [ManifestPart] = []
        for (reference, part) in zip(index.parts, split.parts) {
            #expect(ManifestSplit.verify(part.bytes, as: reference))
            parts.append(try ManifestFile.decodePart(part.bytes, path: reference.path))
        }
        return (index, parts)
    }

    /// Parts are cut by bytes as well as by entries: blocks that each list 12,000 files (a page
    /// with that many images) make parts of a few MB each, under `partBytesBudget`, where runs
    /// cut by entries alone made one part of about 30 MB (the class of a 76 MB part that every
    /// client refused). An entry's bound is never below its bytes, however its text escapes, and
    /// ordinary entries are cut as before.
    @Test func partsAreCutByBytesSoNoneOutgrowsTheBudget() throws {
        var manifest = Self.manifest(blocks: 40)
        var files = manifest.files ?? [:]
        for number in 0..<12 {
            var listing = manifest.blocks[number].files ?? [:]
            for file in 0..<12_000 {
                let sha = SHA256Hex.of(Array("b\(number) f\(file)".utf8))
                listing["static/images/picture-\(file).png"] = sha
                files[sha] = CourseFile(size: 10, compressedSize: 10, encoding: nil)
            }
            manifest.blocks[number].files = listing
        }
        // Text that escapes at six bytes a byte.
        manifest.blocks[30].displayName = String(repeating: "\u{1}", count: 50_000)
        manifest.files = files
        let split = ManifestSplit.split(manifest)
        let largest = split.parts.map(\.bytes.count).max() ?? 0
        #expect(largest <= ManifestLimits().partBytesBudget, "largest part \(largest) bytes")
        #expect(split.parts.filter { $0.reference.blocks > 0 }.count >= 6, "a few heavy blocks a part")
        let (index, parts) = try Self.decoded(split)
        let assembled = ManifestSplit.assemble(index, parts: parts)
        #expect(assembled.blocks == manifest.blocks)
        #expect(assembled.files == manifest.files, "files \(assembled.files?.count ?? -1) of \(manifest.files?.count ?? -1)")
        for number in [0, 11, 30, 39] {
            let block = manifest.blocks[number]
            var alone = CourseManifest(courseID: manifest.courseID, publishedAt: manifest.publishedAt, generator: manifest.generator, blocks: [block])
            let listed = Set(block.files?.values ?? [:].values)
            alone.files = manifest.files?.filter { listed.contains($0.key) }
            #expect(ManifestSplit.split(alone).parts[0].bytes.count <= block.partBytesBound + 1_024)
        }
        // Ordinary blocks: cut by entries, as before the byte bound.
        let ordinary = Self.manifest(blocks: 5_000)
        #expect(ManifestSplit.split(ordinary).parts.map(\.reference.blocks).reduce(0, +) == 5_000)
        #expect(ManifestSplit.split(ordinary).parts.count == ManifestSplit.runs(of: ordinary.blocks.map(\.usageID)).count)
    }

    @Test func partsAssembleToTheWholeManifest() throws {
        let manifest = Self.manifest(blocks: 5_000, containers: 1_250)
        let split = ManifestSplit.split(manifest)
        #expect(split.parts.count > 10)
        #expect(split.parts.allSatisfy { $0.reference.blocks + $0.reference.containers <= ManifestSplit.maximumEntries })
        #expect(split.parts.allSatisfy { $0.reference.blocks == 0 || $0.reference.containers == 0 })
        let (index, parts) = try Self.decoded(split)
        #expect(index == split.index)
        #expect(ManifestSplit.assemble(index, parts: parts) == manifest)
        #expect(ManifestFile.encode(ManifestSplit.assemble(index, parts: parts)) == ManifestFile.encode(manifest))
    }

    /// A build makes the parts on several workers and hands each over as it is made, and an
    /// interim manifest (a few entries pointing at staged archives) takes the final one's other
    /// parts: the index must be the one a fresh split gives, and the entry bytes a lower bound
    /// of manifest.json's size.
    @Test func partsMadeInParallelOrReusedAreTheFreshSplit() throws {
        let manifest = Self.manifest(blocks: 3_000, containers: 700)
        let fresh = ManifestSplit.split(manifest)
        let made = Mutex<[String: [UInt8]]>([:])
        let (index, entryBytes) = try ManifestSplit.index(of: manifest, workers: 2) { (reference, bytes) -> CancellationError? in
            made.withLock { $0[reference.sha256] = bytes }
            return nil
        }.get()
        #expect(index == fresh.index)
        #expect(made.withLock { $0 } == Dictionary(uniqueKeysWithValues: fresh.parts.map { ($0.reference.sha256, $0.bytes) }))
        let wholeSize = ManifestFile.encode(manifest).count
        #expect(entryBytes > wholeSize / 2 && entryBytes < wholeSize, "\(entryBytes) of \(wholeSize)")

        var interim = manifest
        let changed: Set<Int> = [7, 1_500, 2_999]
        for position in changed { interim.blocks[position].archive = "html/.staged-\(position).zip" }
        let remade = Mutex(0)
        let (reused, _) = try ManifestSplit.index(of: interim, workers: 2, reusing: (index, changed)) { (reference, _) -> CancellationError? in
            if reference.blocks > 0 { remade.withLock { $0 += 1 } }
            return nil
        }.get()
        #expect(reused == ManifestSplit.split(interim).index)
        #expect(remade.withLock { $0 } == Set(reused.parts).subtracting(index.parts).count, "only parts holding a changed entry are made")
        #expect((1...3).contains(remade.withLock { $0 }))

        let failed = ManifestSplit.index(of: manifest, workers: 2) { (reference, _) -> CancellationError? in
            reference.containers > 0 ? CancellationError() : nil
        }
        #expect(throws: CancellationError.self) { try failed.get() }
    }

    /// A rebuild names again the parts in place whose entries and files are unchanged: after
    /// one edit it makes one part, and the index is still the one a fresh split gives; the
    /// entry bytes stay a lower bound of manifest.json's size.
    @Test func aRebuildMakesOnlyTheChangedPartAndNamesTheOthersAgain() throws {
        let manifest = Self.manifest(blocks: 3_000, containers: 700)
        let folder = NSTemporaryDirectory() + "coursepack-parts-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/" + ManifestPart.folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let split = ManifestSplit.split(manifest)
        for part in split.parts { try Data(part.bytes).write(to: URL(fileURLWithPath: folder + "/" + part.reference.path)) }
        try Data(ManifestFile.encode(split.index)).write(to: URL(fileURLWithPath: folder + "/" + ManifestIndex.fileName))
        let published = try #require(try PublishedManifest.read(folder: folder, workers: 2))
        let parts = try #require(ManifestSplit.PublishedParts(published, in: folder, workers: 2))

        var edited = manifest
        edited.blocks[1_234].displayName = "Edited"
        edited.outline?[300].displayName = "Edited unit"
        let (index, entryBytes, made) = try Self.indexCountingParts(of: edited, published: parts)
        #expect(index == ManifestSplit.split(edited).index)
        #expect(made == 2, "one block part and one outline part")
        let wholeSize = ManifestFile.encode(edited).count
        #expect(entryBytes > wholeSize / 2 && entryBytes < wholeSize, "\(entryBytes) of \(wholeSize)")

        // A course file listed with other sizes is a change too.
        var refiled = manifest
        let sha = try #require(refiled.blocks[10].files?["index.html"])
        refiled.files?[sha]?.compressedSize += 1
        let (refiledIndex, _, refiledMade) = try Self.indexCountingParts(of: refiled, published: parts)
        #expect(refiledIndex == ManifestSplit.split(refiled).index)
        #expect(refiledMade == 1)
    }

    /// Beside a `manifest.json` the build reads the parts the index names and names them again
    /// only when they are exactly its blocks: then one edit makes one block part (and the
    /// outline's few parts, which are not checked), and the parts' entries are what the next
    /// `manifest.json` is made of. Parts of another manifest, a damaged or missing part, an
    /// index whose counts cut the entries elsewhere, or a part in another layout: none is named.
    @Test func besideManifestJSONPartsAreNamedAgainOnlyWhenTheyAreItsBlocks() throws {
        let manifest = Self.manifest(blocks: 3_000, containers: 700)
        let split = ManifestSplit.split(manifest)
        func folder(_ whole: CourseManifest, index: ManifestIndex = split.index, parts: [(String, [UInt8])]? = nil) throws -> String {
            let folder = NSTemporaryDirectory() + "coursepack-parts-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder + "/" + ManifestPart.folder, withIntermediateDirectories: true)
            for (path, bytes) in parts ?? split.parts.map({ ($0.reference.path, $0.bytes) }) {
                try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + path))
            }
            try Data(ManifestFile.encode(index)).write(to: URL(fileURLWithPath: folder + "/" + ManifestIndex.fileName))
            try Data(ManifestFile.encode(whole)).write(to: URL(fileURLWithPath: folder + "/" + PublishedManifest.wholeFileName))
            return folder
        }
        func parts(_ folder: String) throws -> ManifestSplit.PublishedParts? {
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let published = try #require(try PublishedManifest.read(folder: folder, workers: 2))
            #expect(published.hasWholeFile)
            return ManifestSplit.PublishedParts(published, in: folder, workers: 2)
        }

        let intact = try #require(try parts(try folder(manifest)))
        let blockParts = split.index.parts.filter { $0.blocks > 0 }
        let runs = try blockParts.map { try #require(intact.blockEntries[$0.sha256]) }
        #expect(ManifestFile.encode(manifest, blockEntries: runs) == [UInt8](ManifestFile.encode(manifest)))
        var edited = manifest
        edited.blocks[1_234].displayName = "Edited"
        let (index, _, made) = try Self.indexCountingParts(of: edited, published: intact)
        #expect(index == ManifestSplit.split(edited).index)
        #expect(made == 1 + split.index.parts.count { $0.containers > 0 })

        // What a build that stopped between manifest.json and the index leaves: its parts and
        // manifest.json, the index (and parts) of the publish before.
        #expect(try parts(try folder(edited, parts: split.parts.map { ($0.reference.path, $0.bytes) } + ManifestSplit.split(edited).parts.map { ($0.reference.path, $0.bytes) })) == nil)
        var inserted = manifest
        inserted.blocks.insert(manifest.blocks[5], at: 6)
        inserted.blocks[6].usageID += "-copy"
        #expect(try parts(try folder(inserted)) == nil, "a block more")
        let first = try #require(blockParts.first)
        var damaged = split.parts.map { ($0.reference.path, $0.bytes) }
        damaged[0].1[damaged[0].1.count / 2] ^= 1
        #expect(try parts(try folder(manifest, parts: damaged)) == nil, "a damaged part")
        #expect(try parts(try folder(manifest, parts: Array(split.parts.dropFirst().map { ($0.reference.path, $0.bytes) }))) == nil, "a part missing")
        // The same parts, the first said to hold one entry more and the second one fewer.
        var shifted = split.index
        shifted.parts[0].blocks += 1
        shifted.parts[1].blocks -= 1
        #expect(shifted.parts[1].containers == 0 && shifted.parts[1].blocks > 0)
        #expect(try parts(try folder(manifest, index: shifted)) == nil, "counts that cut the entries elsewhere")
        // The first part's entries written compactly, the index naming that file.
        let compact = Array(String(decoding: split.parts[0].bytes, as: UTF8.self).replacingOccurrences(of: "\n    {", with: "\n {").utf8)
        var relaid = split.index
        relaid.parts[0] = PartReference(sha256: SHA256Hex.of(compact), size: UInt64(compact.count), blocks: first.blocks, containers: 0)
        #expect(try parts(try folder(manifest, index: relaid, parts: [(relaid.parts[0].path, compact)] + split.parts.dropFirst().map { ($0.reference.path, $0.bytes) })) == nil, "another layout")
    }

    @Test func oneEditOrInsertionChangesOnePart() {
        var manifest = Self.manifest(blocks: 5_000)
        let before = Set(ManifestSplit.split(manifest).index.parts)
        manifest.blocks[2_345].contentHash = String(repeating: "f", count: 64)
        let edited = Set(ManifestSplit.split(manifest).index.parts)
        #expect(edited.subtracting(before).count == 1)
        var inserted = Self.manifest(blocks: 5_000)
        var block = inserted.blocks[10]
        block.usageID += "-new"
        inserted.blocks.insert(block, at: 3_000)
        let afterInsert = Set(ManifestSplit.split(inserted).index.parts)
        // The new block's own id may end a run, splitting its part in two, and a run cut at the
        // maximum moves the next cut by one; the parts after the next natural end stay.
        let changed = afterInsert.subtracting(before)
        #expect((1...2).contains(changed.count))
        #expect(changed.reduce(0) { $0 + $1.blocks } <= 2 * ManifestSplit.maximumEntries)
        #expect(afterInsert.intersection(before).count >= before.count - 2)
    }

    @Test func aPartNotMatchingItsReferenceIsRefused() throws {
        let split = ManifestSplit.split(Self.manifest(blocks: 600))
        var bytes = split.parts[0].bytes
        bytes[bytes.count / 2] ^= 1
        #expect(!ManifestSplit.verify(bytes, as: split.parts[0].reference))
        #expect(throws: ManifestError.self) { try ManifestFile.decodePart(Array("{\"blocks\": 3}".utf8), path: "manifest/x.json") }
        var index = split.index
        index.schemaVersion = 4
        #expect(throws: ManifestError.self) { try ManifestFile.decodeIndex(ManifestFile.encode(index), path: "manifest-index.json") }
    }

    /// `manifest.json` made of the entries its parts hold (as a build makes it, after encoding
    /// each part) is byte for byte the manifest encoded, whatever the entries' text: quotes,
    /// backslashes, escaped newlines, the bytes of `"\n  ]"` spelled out inside a name, and
    /// entries that each fill a part of their own.
    @Test func manifestJSONMadeOfItsPartsEntriesIsItsEncoding() throws {
        var manifest = Self.manifest(blocks: 1_500, containers: 20)
        manifest.blocks[7].displayName = "A \"quoted\" name\n  ] with what ends an array, and \\ too"
        manifest.blocks[8].displayName = "Ünïcödé, \u{2028} and \t tabs"
        manifest.blocks[9].groupAccess = ["50": [1, 2]]
        manifest.blocks[10].files = [:]
        manifest.blocks[11].reason = "online only: ]\n  ]"
        for (name, manifest) in [("ordinary", manifest), ("one block", Self.manifest(blocks: 1)), ("no blocks", Self.manifest(blocks: 0))] {
            let split = ManifestSplit.split(manifest)
            var runs: [ArraySlice<UInt8>] = []
            for part in split.parts where part.reference.blocks > 0 {
                let range = try #require(ManifestFile.blockEntries(inPart: part.bytes), "\(name)")
                runs.append(part.bytes[range])
            }
            #expect(runs.count == split.index.parts.count { $0.blocks > 0 }, "\(name)")
            #expect(ManifestFile.encode(manifest, blockEntries: runs) == [UInt8](ManifestFile.encode(manifest)), "\(name)")
        }
        // A part of containers only holds no entries; bytes in any other layout hold none either.
        let outlineOnly = try #require(ManifestSplit.split(manifest).parts.last { $0.reference.blocks == 0 })
        #expect(ManifestFile.blockEntries(inPart: outlineOnly.bytes) == nil)
        #expect(ManifestFile.blockEntries(inPart: Array("{\"blocks\":[{\"usage_id\":\"x\"}]}".utf8)) == nil)
        #expect(ManifestFile.blockEntries(inPart: []) == nil)
    }

    /// The index of `manifest` beside a previous publish, with its entry bytes and how many
    /// parts were made (not named again from `published`).
    private static func indexCountingParts(
        of manifest: CourseManifest, published: ManifestSplit.PublishedParts
    ) throws -> (index: ManifestIndex, entryBytes: Int, made: Int) {
        let made = Mutex(0)
        let (index, entryBytes) = try ManifestSplit.index(of: manifest, workers: 2, published: published) { (_, _) -> CancellationError? in
            made.withLock { $0 += 1 }
            return nil
        }.get()
        return (index, entryBytes, made.withLock { $0 })
    }
}
