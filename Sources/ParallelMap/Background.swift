import Dispatch
import Synchronization

/// A value computed on another thread while the caller goes on; `value` waits for it.
public final class Background<T: Sendable>: Sendable {
    private let result: Mutex<T?>
    private let done = DispatchSemaphore(value: 0)

    public init(_ work: @escaping @Sendable () -> T) {
        result = Mutex(nil)
        DispatchQueue.global().async { [self] in
            result.withLock { $0 = work() }
            done.signal()
        }
    }

    public init(finished value: T) {
        result = Mutex(value)
        done.signal()
    }

    public var value: T {
        done.wait()
        defer { done.signal() }
        // Set before the semaphore is signalled, so it is never nil here.
        return result.withLock { $0 }!
    }
}

extension Background {
    /// `work` on another thread when `parallel`, else run here before this returns: a build of
    /// one job runs on one thread.
    public static func onAnotherCore(if parallel: Bool, _ work: @escaping @Sendable () -> T) -> Background {
        parallel ? Background(work) : Background(finished: work())
    }
}
