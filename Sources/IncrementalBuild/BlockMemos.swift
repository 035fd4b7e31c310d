import FileSystem
import Foundation

/// What each block's archive was last made from, so that a rebuild renders only the blocks
/// whose inputs changed. A memo is used only while the previous manifest still lists the
/// content it records (`contentHash`): a memo left by an interrupted build, or one older than
/// the manifest, can never bring back other content than the manifest names. `Note` is what
/// the builder must report again for a block it does not render (its warnings).
public struct BlockMemos<Note: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
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

    static var fileName: String { "blocks.json" }
    static var format: Int { 1 }

    var format: Int
    /// By usage id.
    public var memos: [String: Memo]

    public init(memos: [String: Memo] = [:]) {
        self.format = Self.format
        self.memos = memos
    }

    public subscript(usageID: String) -> Memo? { memos[usageID] }

    static func load(from folder: String) -> BlockMemos {
        guard let data = FileManager.default.contents(atPath: folder + "/" + fileName),
            let memos = try? JSONDecoder().decode(BlockMemos.self, from: data), memos.format == format
        else { return BlockMemos() }
        return memos
    }

    func save(to folder: String) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return }
        try? DurableFile.replace(folder + "/" + Self.fileName, with: Array(data))
    }
}
