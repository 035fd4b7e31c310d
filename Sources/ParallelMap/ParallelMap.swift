import Dispatch
import Synchronization

extension Array where Element: Sendable {
    /// `transform` applied to every element by `workers` threads that take the next element as
    /// they finish one, so uneven items balance out; results come back in input order. One
    /// worker runs on the calling thread alone. `progress` sees (done, total) after each item.
    public func parallelMap<Result: Sendable>(
        workers: Int, progress: @Sendable (Int, Int) -> Void = { _, _ in }, _ transform: @Sendable (Element) -> Result
    ) -> [Result] {
        let next = Mutex(0)
        let results = Mutex([Result?](repeating: nil, count: count))
        let done = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: Swift.max(1, Swift.min(workers, count))) { _ in
            while true {
                let index = next.withLock { value -> Int in
                    defer { value += 1 }
                    return value
                }
                guard index < count else { return }
                let result = transform(self[index])
                results.withLock { $0[index] = result }
                progress(done.withLock { $0 += 1; return $0 }, count)
            }
        }
        // Every index below `count` was taken by exactly one worker, which stored its result.
        return results.withLock { $0.map { $0! } }
    }
}
