import CourseSearch
import Foundation
import Manifest
import Synchronization

/// The documents of the last search index, read back from its deflated parts (`DeflatedChunks`)
/// where `SearchParts` says each was: a part is inflated the first time a document in it is
/// asked for, and only if its bytes are those its key names. Shared by the workers that make
/// the parts.
final class PreviousDocuments: Sendable {
    private let parts: SearchParts
    private let chunks: [[UInt8]: DeflatedChunks.Chunk]
    /// The pieces inflated last, by position in `parts.chunkKeys` (nil for one missing or
    /// damaged), at most `keptParts` of them: the workers make the parts in order, and a part
    /// made again takes its documents from the one or two it replaces, so a rename of every
    /// chapter holds a few parts at a time, not the course's whole text.
    private let inflated = Mutex<(parts: [Int32: [UInt8]?], order: [Int32])>(([:], []))
    static let keptParts = 8
    private let byText = Mutex<[SearchParts.TextKey: [UInt8]]?>(nil)

    init(parts: SearchParts, chunks: DeflatedChunks) {
        self.parts = parts
        self.chunks = chunks.chunks
    }

    /// The bytes of the document with this fingerprint in the last index; nil when none is
    /// recorded, its part cannot be read back, or what the record points at is not one whole
    /// document of `usageID` (a record wrong about where it is costs its text's extraction,
    /// never another document's bytes in its place).
    func bytes(of fingerprint: [UInt8], usageID: String) -> ArraySlice<UInt8>? {
        document(of: fingerprint, usageID: usageID)?.bytes
    }

    /// The document's bytes with the literals `EncodedSearchDocument.literals` found in them,
    /// read once for both callers.
    private func document(
        of fingerprint: [UInt8], usageID: String
    ) -> (bytes: ArraySlice<UInt8>, text: ArraySlice<UInt8>, bodyTerms: ArraySlice<UInt8>)? {
        guard let document = parts.documents[fingerprint], document.chunk >= 0, document.length > 0, let part = part(document.chunk)
        else { return nil }
        let start = Int(document.offset)
        let end = start + document.length
        guard start >= 0, end <= part.count, let found = EncodedSearchDocument.literals(in: part[start..<end]),
            found.usageID.elementsEqual(JSONString.literal(usageID))
        else { return nil }
        return (part[start..<end], found.text, found.bodyTerms)
    }

    /// The text and body terms literals a block whose page has this text key had in the last
    /// index, whatever its name and place were then.
    func literals(of textKey: SearchParts.TextKey, usageID: String) -> (text: ArraySlice<UInt8>, bodyTerms: ArraySlice<UInt8>)? {
        // Made on first use: only a rebuild in which a block's name or place changed asks.
        let fingerprints = byText.withLock { found in
            if let found { return found }
            let made = parts.fingerprintsByText()
            found = made
            return made
        }
        guard let fingerprint = fingerprints[textKey], let found = document(of: fingerprint, usageID: usageID) else { return nil }
        return (found.text, found.bodyTerms)
    }

    private func part(_ chunk: Int32) -> [UInt8]? {
        if let known = inflated.withLock({ $0.parts[chunk] }) { return known }
        let key = parts.chunkKeys[Int(chunk)]
        let bytes = chunks[key].flatMap { DeflatedChunks.inflate($0, key: key) }
        // Two workers may inflate one part at once: the first kept.
        return inflated.withLock { known in
            if let first = known.parts[chunk] { return first }
            known.parts[chunk] = bytes
            known.order.append(chunk)
            if known.order.count > Self.keptParts { known.parts[known.order.removeFirst()] = nil }
            return bytes
        }
    }

    /// The folder of per-block texts an earlier coursepack kept (`search-texts/N.bin`), which
    /// nothing reads any more: its shard files, then the folder. Only regular files named as
    /// shards are removed, and the folder only when it is a folder, not a link.
    static func removeLegacyTexts(in stateFolder: String) {
        let folder = stateFolder + "/search-texts"
        var info = stat()
        guard lstat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            guard name.hasSuffix(".bin"), UInt64(name.dropLast(4)) != nil else { continue }
            var file = stat()
            if lstat(folder + "/" + name, &file) == 0, (file.st_mode & S_IFMT) == S_IFREG { unlink(folder + "/" + name) }
        }
        rmdir(folder)
    }
}
