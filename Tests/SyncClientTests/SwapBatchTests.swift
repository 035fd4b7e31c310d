import Testing

@testable import SyncClient

/// Each batch a sync swaps in ends with a local manifest naming the whole course, so the number
/// of batches sets how many times that manifest is written. They grow with what was swapped in.
struct SwapBatchTests {
    /// Fills batches as a sync does and returns the size of each batch installed.
    /// `bytesEach`: what each block stages (0: a folder of links into the store).
    static func batches(of count: Int, failing: Set<Int> = [], bytesEach: UInt64 = 0) -> [Int] {
        var batch = SwapBatch(count: count, installedNow: [])
        var sizes: [Int] = []
        func install() {
            sizes.append(batch.ready.count)
            var results: [Int: Result<UInt64, SyncError>] = [:]
            for (index, _) in batch.ready {
                results[index] = failing.contains(index) ? .failure(.local(path: "x", reason: "full disk")) : .success(1)
            }
            batch.record(results)
        }
        for index in 0..<count {
            var block = StagedBlock(usageID: "b\(index)", folder: "html/b\(index)", sha256: "", target: "/nonexistent")
            block.stagedBytes = bytesEach
            batch.add(.success(block), at: index)
            if batch.isFull { install() }
        }
        if !batch.ready.isEmpty { install() }
        return sizes
    }

    @Test func aCourseOf100000BlocksIsSwappedInFewerThan20Batches() {
        let sizes = Self.batches(of: 100_000)
        #expect(sizes.reduce(0, +) == 100_000)
        #expect(sizes.count <= 20, "\(sizes.count) batches: \(sizes)")
        // What the manifests written after each batch name, added up: about three times the course.
        var (swapped, named) = (0, 0)
        for size in sizes {
            swapped += size
            named += swapped
        }
        #expect(named <= 4 * 100_000, "the manifests written name \(named) blocks in all: \(sizes)")
        // A sync killed mid-batch loses at most the batch: never more than half of what it had.
        var before = 0
        for size in sizes {
            #expect(size <= max(SwapBatch.maximumBlocks, before / 2))
            before += size
        }
    }

    @Test func aSmallCourseKeepsBatchesOf256AndTheByteCapStillBinds() {
        #expect(Self.batches(of: 600) == [256, 256, 88])
        // Blocks that failed are not counted as swapped in: the batches do not grow on them.
        #expect(Self.batches(of: 1_000, failing: Set(0..<1_000)) == [256, 256, 256, 232])
        // Unpacked archives of 64 MiB: two to a batch, however many were swapped in.
        #expect(Set(Self.batches(of: 40, bytesEach: 64 << 20).dropLast()) == [2])
    }
}
