import FileSystem
import Foundation

/// What a memo keeps of its block besides its inputs and content, as fields of the memo's
/// record: a note is read and written for every block of every build, and one JSON document
/// per note (each holds its own link names) took a tenth of a one-page edit at 3,000 pages.
/// Nil either way drops the memo (its block is rendered again), never a part of its note.
public protocol MemoNote: Sendable, Equatable {
    var memoFields: [[UInt8]]? { get }
    init?(memoFields: ArraySlice<ArraySlice<UInt8>>)
}

/// The memos' file in the state folder, whatever their notes.
let blockMemosFileName = "blocks.bin"

/// What each block's archive was last made from, so that a rebuild renders only the blocks
/// whose inputs changed. A memo is used only while the previous manifest still lists the
/// content it records (`contentHash`): a memo left by an interrupted build, or one older than
/// the manifest, can never bring back other content than the manifest names. `Note` is what
/// the builder must report again for a block it does not render (its warnings).
public struct BlockMemos<Note: MemoNote>: Sendable, Equatable {
    public struct Memo: Sendable, Equatable {
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
    }

    static var fileName: String { blockMemosFileName }
    static var format: String { "coursepack-block-memos-v4" }

    /// By usage id.
    public var memos: [String: Memo]

    public init(memos: [String: Memo] = [:]) {
        self.memos = memos
    }

    public subscript(usageID: String) -> Memo? { memos[usageID] }

    /// A `RecordFile` of one record a memo: usage id, inputs, content hash, then the note's
    /// own fields. A record whose note does not decode makes the whole file read as no memos.
    static func load(from folder: String) -> BlockMemos {
        var memos = BlockMemos()
        guard let records = RecordFile.load(folder + "/" + fileName, format: format) else { return memos }
        memos.memos.reserveCapacity(records.count)
        for fields in records {
            guard fields.count >= 3, let note = Note(memoFields: fields[3...]) else { return BlockMemos() }
            memos.memos[String(decoding: fields[0], as: UTF8.self)] = Memo(
                inputs: String(decoding: fields[1], as: UTF8.self), contentHash: String(decoding: fields[2], as: UTF8.self), note: note)
        }
        return memos
    }

    func save(to folder: String) {
        // Sorted as an array of strings, the memos taken by position: this code is generic over
        // `Note`, and sorting the dictionary's keys and looking each memo up went through
        // unspecialized code, 0.6 s of a one-block edit at 100,000 blocks.
        let usageIDs = Array(memos.keys)
        let values = Array(memos.values)
        let notes = values.map(\.note.memoFields)
        var size = 0
        for (position, usageID) in usageIDs.enumerated() {
            guard let note = notes[position] else { continue }
            let memo = values[position]
            size += RecordFile.recordSize(fieldLengths: [usageID.utf8.count, memo.inputs.utf8.count, memo.contentHash.utf8.count])
            size += note.reduce(0) { $0 + 4 + $1.count }
        }
        var file = RecordFile(format: Self.format, capacity: size)
        let order = usageIDs.indices.sorted { usageIDs[$0] < usageIDs[$1] }
        for position in order {
            guard let note = notes[position] else { continue }
            let (usageID, memo) = (usageIDs[position], values[position])
            file.add([ArraySlice(usageID.utf8), ArraySlice(memo.inputs.utf8), ArraySlice(memo.contentHash.utf8)] + note.map { $0[...] })
        }
        // A memo is trusted only where the published entry and archive agree with it: a lost or
        // older memo costs the rendering it would have saved.
        file.save(to: folder + "/" + Self.fileName, synced: false)
    }
}
