#if canImport(Glibc)
import Glibc
#endif

/// Memory the process has freed goes back to the system. glibc keeps freed memory in its
/// per-thread arenas, so after a phase that allocated and freed a lot on every worker (rendering
/// and archiving 100,000 pages) the resident size stays at that phase's high-water mark while
/// the next phase (the search index) adds its own on top. Called between such phases.
enum FreedMemory {
    /// glibc's `malloc_trim`, looked up at run time: Swift's Glibc module does not declare it
    /// (`malloc.h`), and other C libraries have none.
    private typealias Trim = @convention(c) (Int) -> Int32
    private static let trim: Trim? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
        #else
        return nil
        #endif
    }()

    static func returnToSystem() {
        _ = trim?(0)
    }
}

/// A build's tables kept to the end of a process that exits right after the build (the command
/// line), rather than freed one by one as the build returns: at 100,000 blocks freeing them took
/// half a second, after everything was written. The system takes the memory back at exit at
/// once, as compilers leave theirs (`-disable-free`).
enum LeftForExit {
    private final class Kept: @unchecked Sendable {
        // Never read: holding the values is its whole purpose.
        let values: Any
        init(_ values: Any) { self.values = values }
    }

    static func keep(_ values: Any) {
        _ = Unmanaged.passRetained(Kept(values))
    }
}
