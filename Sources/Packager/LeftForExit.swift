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
