/// The stamps of the plain files (regular, not a link, one name) under a folder, as one walk
/// of it saw them: a build walks the course once to tell whether anything changed, and the load
/// and the block inputs take each file's stamp from that walk rather than `lstat`ting every
/// file again (at 100,000 blocks, 150,000 more calls in two passes). A stamp taken before the
/// file is read is what every cache kept by stamps asks for; the walk runs before anything is
/// read, so a file written after it has another stamp by the next build.
///
/// Kept as the walk found them, one buffer of path bytes: a walk whose course turns out
/// unchanged (a no-op rebuild) pays an append per file and nothing else. Paths are compared by
/// their bytes: as `String`s, two names that differ only in how an accent is encoded are equal.
public struct PlainFileStamps: Sendable, Equatable {
    /// The canonical path of the folder walked.
    public private(set) var root: String
    /// Each path relative to `root` (`/`-separated, no `.` or `..`), one after another.
    private var pathBytes: [UInt8] = []
    private var pathEnds: [Int] = []
    private var fileStamps: [FileStamp] = []

    public init(root: String) {
        self.root = root
    }

    public static let none = PlainFileStamps(root: "")

    public var count: Int { fileStamps.count }

    public mutating func append(_ path: some Collection<UInt8>, _ stamp: FileStamp) {
        pathBytes.append(contentsOf: path)
        pathEnds.append(pathBytes.count)
        fileStamps.append(stamp)
    }

    /// The same stamps of the same files, said to be under `root`.
    public func rooted(at root: String) -> PlainFileStamps {
        var copy = self
        copy.root = root
        return copy
    }

    /// Every path and its stamp, in the order the walk found them.
    public var entries: [(path: [UInt8], stamp: FileStamp)] {
        fileStamps.indices.map { (Array(pathBytes[start(of: $0)..<pathEnds[$0]]), fileStamps[$0]) }
    }

    private func start(of index: Int) -> Int { index == 0 ? 0 : pathEnds[index - 1] }

    /// The stamps of the files under `folder` (canonical: `root` itself or a folder inside it),
    /// by path relative to it, indexed for lookups; nil when `folder` is neither.
    public func under(_ folder: String) -> Stamps? {
        guard !root.isEmpty, !fileStamps.isEmpty else { return nil }
        let folderBytes = Array(folder.utf8)
        var rootBytes = Array(root.utf8)
        var prefix: [UInt8] = []
        if folderBytes != rootBytes {
            if rootBytes.last != UInt8(ascii: "/") { rootBytes.append(UInt8(ascii: "/")) }
            guard folderBytes.count > rootBytes.count, folderBytes.starts(with: rootBytes) else { return nil }
            prefix = Array(folderBytes[rootBytes.count...]) + [UInt8(ascii: "/")]
        }
        return Stamps(self, prefix: prefix)
    }

    /// The stamps under one folder, found by path in an open-addressing table of positions.
    public struct Stamps: Sendable {
        private let stamps: PlainFileStamps
        /// Where each path starts once the folder's prefix is left out.
        private let starts: [Int]
        private let slots: [Int32]
        private let mask: Int

        init(_ stamps: PlainFileStamps, prefix: [UInt8]) {
            self.stamps = stamps
            var starts = [Int](repeating: -1, count: stamps.count)
            var members = 0
            stamps.pathBytes.withUnsafeBufferPointer { bytes in
                for index in 0..<stamps.count {
                    let start = stamps.start(of: index)
                    let end = stamps.pathEnds[index]
                    guard end - start > prefix.count, prefix.indices.allSatisfy({ bytes[start + $0] == prefix[$0] }) else { continue }
                    starts[index] = start + prefix.count
                    members += 1
                }
            }
            var capacity = 16
            while capacity < members * 2 { capacity <<= 1 }
            var slots = [Int32](repeating: -1, count: members == 0 ? 1 : capacity)
            let mask = members == 0 ? 0 : capacity - 1
            stamps.pathBytes.withUnsafeBufferPointer { bytes in
                for index in 0..<stamps.count where starts[index] >= 0 {
                    var slot = Self.hash(UnsafeBufferPointer(rebasing: bytes[starts[index]..<stamps.pathEnds[index]])) & mask
                    // A path is listed once: a walk enters each folder once.
                    while slots[slot] >= 0 { slot = (slot + 1) & mask }
                    slots[slot] = Int32(index)
                }
            }
            (self.starts, self.slots, self.mask) = (starts, slots, mask)
        }

        /// The stamp of `relative` (to the folder) when the walk found it a plain file.
        public func stamp(of relative: String) -> FileStamp? {
            var relative = relative
            return relative.withUTF8 { find($0) }
        }

        private func find(_ path: UnsafeBufferPointer<UInt8>) -> FileStamp? {
            guard mask > 0 else { return nil }
            return stamps.pathBytes.withUnsafeBufferPointer { bytes -> FileStamp? in
                var slot = Self.hash(path) & mask
                while slots[slot] >= 0 {
                    let index = Int(slots[slot])
                    let start = starts[index]
                    let end = stamps.pathEnds[index]
                    if end - start == path.count, path.elementsEqual(bytes[start..<end]) { return stamps.fileStamps[index] }
                    slot = (slot + 1) & mask
                }
                return nil
            }
        }

        /// 64-bit FNV-1a, cut to an `Int`.
        private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return Int(truncatingIfNeeded: hash ^ (hash >> 29))
        }
    }
}
