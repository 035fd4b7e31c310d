import FileSystem
import Foundation

/// What each block's archive was last made from, so that a rebuild renders only the blocks
/// whose inputs changed. A memo is used only while the previous manifest still lists the
/// content it records (`contentHash`): a memo left by an interrupted build, or one older than
/// the manifest, can never bring back other content than the manifest names. `Note` is what
/// the builder must report again for a block it does not render (its warnings).
public struct BlockMemos<Note: Codable & Sendable & Equatable>: Sendable, Equatable {
    public struct Memo: Codable, Sendable, Equatable {
        /// Digest of everything the block's page is made from (`InputDigest`).
        public var inputs: String
        /// The content hash of the archive those inputs made.
        public var contentHash: String
        public var note: Note

        public init(inputs: String, contentHash: String, note: Note) {
            self.inputs = inputs
            self.contentHash = contentHash
            self.note = note
        }

        enum CodingKeys: String, CodingKey {
            case inputs, note
            case contentHash = "content_hash"
        }
    }

    static var fileName: String { "blocks.bin" }
    static var format: String { "coursepack-block-memos-v3" }

    /// By usage id.
    public var memos: [String: Memo]

    public init(memos: [String: Memo] = [:]) {
        self.memos = memos
    }

    public subscript(usageID: String) -> Memo? { memos[usageID] }

    /// A `RecordFile` of one record a memo: usage id, inputs, content hash and the note as
    /// JSON. Notes repeat (most blocks warn of nothing), so each distinct one is encoded and
    /// decoded once, not thousands of times.
    static func load(from folder: String) -> BlockMemos {
        var memos = BlockMemos()
        guard let records = RecordFile.load(folder + "/" + fileName, format: format) else { return memos }
        var notes: [ArraySlice<UInt8>: Note] = [:]
        let decoder = JSONDecoder()
        memos.memos.reserveCapacity(records.count)
        for fields in records {
            guard fields.count == 4 else { return BlockMemos() }
            let note: Note
            if let known = notes[fields[3]] {
                note = known
            } else {
                guard let decoded = try? decoder.decode(Note.self, from: Data(fields[3])) else { return BlockMemos() }
                notes[fields[3]] = decoded
                note = decoded
            }
            memos.memos[String(decoding: fields[0], as: UTF8.self)] = Memo(
                inputs: String(decoding: fields[1], as: UTF8.self), contentHash: String(decoding: fields[2], as: UTF8.self), note: note)
        }
        return memos
    }

    func save(to folder: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // A note is a few bytes of JSON (`{"warnings":[]}`) for most blocks.
        let size = memos.reduce(0) { total, memo in
            total + RecordFile.recordSize(fieldLengths: [memo.key.utf8.count, memo.value.inputs.utf8.count, memo.value.contentHash.utf8.count, 32])
        }
        var file = RecordFile(format: Self.format, capacity: size)
        var notes: [Note] = []
        var encoded: [[UInt8]] = []
        // The note of the record before: most blocks share one (no warning), and comparing it
        // first spares a search of the others for each of 100,000 memos.
        var last: Int?
        // Sorted as an array of strings, the memos taken by position: this code is generic over
        // `Note`, and sorting the dictionary's keys and looking each memo up went through
        // unspecialized code, 0.6 s of a one-block edit at 100,000 blocks.
        let usageIDs = Array(memos.keys)
        let values = Array(memos.values)
        let order = usageIDs.indices.sorted { usageIDs[$0] < usageIDs[$1] }
        for position in order {
            let (usageID, memo) = (usageIDs[position], values[position])
            let json: [UInt8]
            if let last, notes[last] == memo.note {
                json = encoded[last]
            } else if let known = notes.firstIndex(of: memo.note) {
                json = encoded[known]
                last = known
            } else {
                guard let data = try? encoder.encode(memo.note) else { return }
                json = Array(data)
                // A course has a few distinct notes; one warning each would make this quadratic.
                if notes.count < 16 {
                    notes.append(memo.note)
                    encoded.append(json)
                    last = notes.count - 1
                }
            }
            file.add([ArraySlice(usageID.utf8), ArraySlice(memo.inputs.utf8), ArraySlice(memo.contentHash.utf8), json[...]])
        }
        // A memo is trusted only where the published entry and archive agree with it: a lost or
        // older memo costs the rendering it would have saved.
        file.save(to: folder + "/" + Self.fileName, synced: false)
    }
}
