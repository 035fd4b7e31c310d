import Manifest

/// A server's manifest is untrusted: before anything is downloaded, every archive path must
/// stay inside the target, ids must be unique, and sizes and hashes must be plausible.
enum ManifestValidation {
    static let maximumArchiveSize: UInt64 = 64 << 30

    static func check(_ manifest: CourseManifest, source: String) throws(SyncError) {
        func refuse(_ reason: String) -> SyncError { .unsafeManifest(source: source, reason: reason) }
        var ids = Set<String>()
        var folders = Set<String>()
        if let runtime = manifest.runtime {
            guard let folder = ArchivePath.installFolder(of: runtime.archive), folder.hasPrefix("runtime/"), folder.split(separator: "/").count == 2 else {
                throw refuse("the runtime archive has an unsafe path \"\(runtime.archive)\"")
            }
            folders.insert(folder.lowercased())
            guard runtime.size <= maximumArchiveSize, runtime.sha256.count == 64,
                runtime.sha256.allSatisfy({ $0.isHexDigit && !$0.isUppercase })
            else { throw refuse("the runtime archive has no plausible size or sha256") }
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
            guard let sha = block.sha256, sha.count == 64, sha.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
                throw refuse("block \(block.usageID) has no valid sha256")
            }
        }
    }
}
