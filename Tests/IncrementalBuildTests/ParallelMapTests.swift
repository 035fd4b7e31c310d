import ParallelMap
import Synchronization
import Testing

/// `parallelMap` writes each result straight into the array it returns, from several threads:
/// every element must be transformed exactly once and land at its own index, whatever the
/// number of workers and however uneven the work.
@Suite struct ParallelMapTests {
    @Test(arguments: [1, 2, 3, 8])
    func everyResultLandsAtItsIndexOnce(workers: Int) {
        let inputs = Array(0..<5_000)
        let calls = Mutex([Int](repeating: 0, count: inputs.count))
        let progress = Mutex(0)
        let results = inputs.parallelMap(workers: workers, progress: { done, total in
            progress.withLock { $0 = max($0, done) }
            #expect(total == inputs.count)
        }) { number in
            calls.withLock { $0[number] += 1 }
            // Uneven work, and results that own heap storage (released correctly or not at all).
            if number % 97 == 0 { for _ in 0..<2_000 { _ = number.description } }
            return (number, String(repeating: "x", count: number % 50) + "#\(number)")
        }
        #expect(results.count == inputs.count)
        #expect(results.enumerated().allSatisfy { $0.offset == $0.element.0 && $0.element.1.hasSuffix("#\($0.offset)") })
        #expect(calls.withLock { $0 }.allSatisfy { $0 == 1 })
        #expect(progress.withLock { $0 } == inputs.count)
    }

    @Test func anEmptyArrayMapsToAnEmptyArray() {
        let none: [Int] = []
        #expect(none.parallelMap(workers: 4) { $0 * 2 }.isEmpty)
        #expect([7].parallelMap(workers: 4) { $0 * 2 } == [14])
    }
}
