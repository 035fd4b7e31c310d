/// The blocks a sync has staged and not yet swapped in, and every download's outcome so far.
struct SwapBatch {
    /// Blocks, or archive bytes, unpacked before they are swapped in together.
    static let maximumBlocks = 256
    static let maximumBytes: UInt64 = 128 << 20

    private(set) var ready: [(Int, StagedBlock)] = []
    private var bytes: UInt64 = 0
    /// By index among the sync's downloads: bytes transferred, or why not installed; nil: not yet known.
    private(set) var outcomes: [Result<UInt64, SyncError>?]
    /// Usage ids whose server version is installed.
    var installedNow: Set<String>

    init(count: Int, installedNow: Set<String>) {
        outcomes = Array(repeating: nil, count: count)
        self.installedNow = installedNow
    }

    var isFull: Bool { ready.count >= Self.maximumBlocks || bytes >= Self.maximumBytes }

    /// A staged block joins the batch; a block that could not be staged has its outcome.
    mutating func add(_ result: Result<StagedBlock, SyncError>, at index: Int, archiveBytes: UInt64) {
        switch result {
        case .success(let block):
            ready.append((index, block))
            bytes += archiveBytes
        case .failure(let error):
            outcomes[index] = .failure(error)
        }
    }

    /// The batch was installed (or not): its outcomes, and an empty batch for the next blocks.
    mutating func record(_ results: [Int: Result<UInt64, SyncError>]) {
        for (index, result) in results { outcomes[index] = result }
        ready = []
        bytes = 0
    }
}
