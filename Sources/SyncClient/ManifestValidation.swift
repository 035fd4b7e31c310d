import Manifest

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
    }

    /// 64 lowercase hex digits.
    static func isSHA256(_ text: String) -> Bool {
        text.count == 64 && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }
}
