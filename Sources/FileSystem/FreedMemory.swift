#if canImport(Glibc)
import Glibc
#endif

/// Memory the process has freed goes back to the system. glibc keeps freed memory in its
/// per-thread arenas, so after a phase that allocated and freed a lot on every worker (rendering
/// and archiving 100,000 pages) the resident size stays at that phase's high-water mark while
/// the next phase (the search index) adds its own on top. Called between such phases, and by a
/// server after it has read a large file once to keep a small index of it.
public enum FreedMemory {
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

    public static func returnToSystem() {
        _ = trim?(0)
    }
}

