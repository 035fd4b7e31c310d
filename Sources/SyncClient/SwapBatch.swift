/// The blocks a sync has staged and not yet swapped in, and every download's outcome so far.
/// Each batch ends with a local manifest naming the whole course, so the batches grow with
/// what the sync has installed: at 100,000 blocks, batches of 256 wrote 360 manifests of up to
/// a quarter of a gigabyte, most of a full sync's time. Growing by half, the manifests written
/// add up to about three times the last one, and a sync killed mid-batch loses at most a third
/// of what it had installed (the bytes staged stay bounded).
struct SwapBatch {
    /// Blocks, or bytes staged (`StagedBlock.stagedBytes`: unpacked archives; a folder of links
    /// into the store adds none), before they are swapped in together: at least
    /// `maximumBlocks`, or half as many as the sync swapped in before, whichever is more.
    static let maximumBlocks = 256
    static let maximumBytes: UInt64 = 128 << 20

    /// The most blocks a batch holds once `swapped` blocks were swapped in before it.
    static func blockLimit(afterSwapping swapped: Int) -> Int { max(maximumBlocks, swapped / 2) }

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

    /// Blocks this sync swapped in so far.
    private var swapped = 0

    var isFull: Bool { ready.count >= Self.blockLimit(afterSwapping: swapped) || bytes >= Self.maximumBytes }

    /// A staged block joins the batch; a block that could not be staged has its outcome.
    mutating func add(_ result: Result<StagedBlock, SyncError>, at index: Int) {
        switch result {
        case .success(let block):
            ready.append((index, block))
            bytes += block.stagedBytes
        case .failure(let error):
            outcomes[index] = .failure(error)
        }
    }

    /// The batch was installed (or not): its outcomes, and an empty batch for the next blocks.
    mutating func record(_ results: [Int: Result<UInt64, SyncError>]) {
        for (index, result) in results {
            outcomes[index] = result
            if case .success = result { swapped += 1 }
        }
        ready = []
        bytes = 0
    }
}
