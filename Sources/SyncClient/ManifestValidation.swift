import Manifest
import ZipArchive

/// A server's manifest is untrusted: before anything is downloaded, every archive path must
/// stay inside the target, ids must be unique, and sizes and hashes must be plausible.
enum ManifestValidation {
    static let maximumArchiveSize: UInt64 = 64 << 30

    static func check(_ manifest: CourseManifest, source: String) throws(SyncError) {
        func refuse(_ reason: String) -> SyncError { .unsafeManifest(source: source, reason: reason) }
        var ids = Set<String>()
        var folders = Set<String>()
        for shared in SharedContent.all(in: manifest) {
            let name = shared.kind.shownName
            guard let folder = shared.installFolder, folder.hasPrefix(shared.kind.rawValue + "/") else {
                throw refuse("\(name) has an unsafe path \"\(shared.archive.archive)\"")
            }
            guard folders.insert(folder.lowercased()).inserted else { throw refuse("\(name) unpacks into \"\(folder)\" like another archive") }
            guard shared.archive.size <= maximumArchiveSize, isSHA256(shared.archive.sha256) else {
                throw refuse("\(name) has no plausible size or sha256")
            }
        }
        for block in manifest.blocks {
            guard ids.insert(block.usageID).inserted else { throw refuse("block \(block.usageID) is listed twice") }
            guard let archive = block.archive, block.offline != false else { continue }
            guard let folder = ArchivePath.installFolder(of: archive) else {
                throw refuse("block \(block.usageID) has an unsafe archive path \"\(archive)\"")
            }
            guard folders.insert(folder.lowercased()).inserted else {
                throw refuse("two blocks unpack into \"\(folder)\" (names may differ only by case)")
            }
            guard let size = block.size, size <= maximumArchiveSize else {
                throw refuse("block \(block.usageID) has no plausible archive size (\(block.size.map(String.init) ?? "none"))")
            }
            guard let sha = block.sha256, isSHA256(sha) else {
                throw refuse("block \(block.usageID) has no valid sha256")
            }
        }
        try checkContents(manifest, source: source)
        try checkOutline(manifest, blocks: ids, source: source)
    }

    /// The outline: each container once, none also a block, and nesting no deeper than
    /// `OutlineEntry.maximumDepth` from any entry (walked with a stack of its own, so a hostile
    /// chain cannot exhaust this walk either). Cycles are left to the walkers, which visit each
    /// id once.
    static func checkOutline(_ manifest: CourseManifest, blocks: Set<String>, source: String) throws(SyncError) {
        func refuse(_ reason: String) -> SyncError { .unsafeManifest(source: source, reason: reason) }
        guard let outline = manifest.outline else { return }
        var children: [String: [String]] = [:]
        children.reserveCapacity(outline.count)
        for entry in outline {
            guard children.updateValue(entry.children, forKey: entry.usageID) == nil else {
                throw refuse("outline entry \(entry.usageID.prefix(200)) is listed twice")
            }
            guard !blocks.contains(entry.usageID) else { throw refuse("\(entry.usageID.prefix(200)) is both a block and an outline entry") }
        }
        // How many levels of containers each entry holds, itself included: computed once per
        // entry, depth first with an explicit stack; a child on the current path (a cycle) counts
        // for nothing.
        var height: [String: Int] = [:]
        var onPath = Set<String>()
        for entry in outline where height[entry.usageID] == nil {
            var stack: [(id: String, next: Int)] = [(entry.usageID, 0)]
            onPath.insert(entry.usageID)
            while let top = stack.last {
                let kids = children[top.id] ?? []
                if top.next < kids.count {
                    stack[stack.count - 1].next += 1
                    let kid = kids[top.next]
                    guard children[kid] != nil, height[kid] == nil, !onPath.contains(kid) else { continue }
                    guard stack.count < OutlineEntry.maximumDepth else {
                        throw refuse("the outline nests deeper than \(OutlineEntry.maximumDepth) levels (at \(kid.prefix(200)))")
                    }
                    stack.append((kid, 0))
                    onPath.insert(kid)
                } else {
                    height[top.id] = 1 + (kids.compactMap { height[$0] }.max() ?? 0)
                    onPath.remove(top.id)
                    stack.removeLast()
                }
            }
            if let depth = height[entry.usageID], depth > OutlineEntry.maximumDepth {
                throw refuse("the outline nests \(depth) levels deep, more than \(OutlineEntry.maximumDepth) (under \(entry.usageID.prefix(200)))")
            }
        }
    }

    /// The course file contents and every folder's listing of them: keys are content hashes,
    /// sizes plausible, each listed path one an archive entry could have, each content listed
    /// known. A manifest that fails is refused whole, before anything is downloaded.
    static func checkContents(_ manifest: CourseManifest, source: String) throws(SyncError) {
        func refuse(_ reason: String) -> SyncError { .unsafeManifest(source: source, reason: reason) }
        guard let files = manifest.files else { return }
        let largest = ArchiveLimits.current.maximumCourseFileSize
        for (key, file) in files {
            guard CourseFile.isContentKey(key) else { throw refuse("files lists \"\(key.prefix(80))\", which is not a sha256") }
            guard file.size <= largest else { throw refuse("content \(key) is \(file.size) bytes, larger than the \(largest) bytes a course file may be") }
            guard file.compressedSize <= maximumArchiveSize else { throw refuse("content \(key) has no plausible size") }
        }
        var listings: [(String, FileListing)] = manifest.blocks.compactMap { block in block.files.map { ("block \(block.usageID)", $0) } }
        listings += SharedContent.all(in: manifest).compactMap { shared in shared.archive.files.map { (shared.kind.shownName, $0) } }
        for (owner, listing) in listings {
            var lowered = Set<String>()
            for (path, key) in listing {
                do { try EntryName.validate(path) } catch { throw refuse("\(owner) lists an unsafe path: \(error)") }
                guard lowered.insert(path.lowercased()).inserted else { throw refuse("\(owner) lists \"\(path)\" twice (names may differ only by case)") }
                guard files[key] != nil else { throw refuse("\(owner) lists \"\(path)\" as content \(key.prefix(80)), which files does not give") }
            }
            // A path that is also another path's folder cannot be both a file and a folder.
            for path in lowered {
                var parent = path
                while let slash = parent.lastIndex(of: "/") {
                    parent = String(parent[..<slash])
                    if lowered.contains(parent) { throw refuse("\(owner) lists \"\(parent)\" as a file and as a folder") }
                }
            }
        }
    }

    static func isSHA256(_ text: String) -> Bool { PartReference.isSHA256(text) }
}
