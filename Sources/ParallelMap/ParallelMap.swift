import Dispatch
import Synchronization

extension Array where Element: Sendable {
    /// `transform` applied to every element by `workers` threads that take the next element as
    /// they finish one, so uneven items balance out; results come back in input order. One
    /// worker runs on the calling thread alone. `progress` sees (done, total) after each item.
    public func parallelMap<Result: Sendable>(
        workers: Int, progress: @Sendable (Int, Int) -> Void = { _, _ in }, _ transform: @Sendable (Element) -> Result
    ) -> [Result] {
        guard !isEmpty else { return [] }
        let next = Mutex(0)
        let done = Mutex(0)
        // Each worker initializes the slots of the indices it took, each exactly once, straight
        // in the result's storage: no array of optionals to copy at the end, which for 100,000
        // blocks held two arrays of results at once.
        return [Result](unsafeUninitializedCapacity: count) { buffer, initialized in
            let slots = Slots(base: buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: Swift.max(1, Swift.min(workers, count))) { _ in
                while true {
                    let index = next.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < count else { return }
                    (slots.base + index).initialize(to: transform(self[index]))
                    progress(done.withLock { $0 += 1; return $0 }, count)
                }
            }
            // `concurrentPerform` returns once every worker has: every index below `count` was
            // taken by exactly one of them, which initialized its slot.
            initialized = count
        }
    }
}

/// The result's storage, shared by the workers; each writes only the slots of its own indices.
private struct Slots<T>: @unchecked Sendable {
    let base: UnsafeMutablePointer<T>
}
