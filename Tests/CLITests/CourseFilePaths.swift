import Foundation
import Manifest
import Testing
import TestSupport

/// Where a client fetches a block's page from in a published folder: the content of its
/// `index.html` under `files/` when the manifest lists course files (issue 31), else its archive.
/// Tests that make one download hostile aim at it.
func fetchedPath(ofPage blockFolder: String, in published: String) throws -> String {
    let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
    let block = try #require(manifest.blocks.first { $0.archive == blockFolder + ".zip" })
    guard let key = block.files?["index.html"], let file = manifest.files?[key] else { return blockFolder + ".zip" }
    return file.path(sha256: key)
}

/// The published path of the content `path` of the block in `blockFolder`, nil without course files.
func fetchedPath(of path: String, inBlock blockFolder: String, published: String) throws -> String? {
    let manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
    let block = try #require(manifest.blocks.first { $0.archive == blockFolder + ".zip" })
    guard let key = block.files?[path], let file = manifest.files?[key] else { return nil }
    return file.path(sha256: key)
}

/// Rewrites the published manifest as builders before issue 31 wrote it (no course files, no
/// listings, no unpacked sizes, no split manifest): a client then reads manifest.json and
/// downloads and unpacks each block's archive, the path that tests of hostile or damaged
/// archives aim at (an older publish, or the archive form the official apps read).
func withoutCourseFiles(_ published: String) throws {
    try TestSupport.removeSplitManifest(published)
    var manifest = try #require(try ManifestFile.read(published + "/manifest.json"))
    manifest.files = nil
    for index in manifest.blocks.indices {
        manifest.blocks[index].files = nil
        manifest.blocks[index].unpackedSize = nil
    }
    for kind in SharedArchive.Kind.allCases {
        manifest[shared: kind]?.files = nil
        manifest[shared: kind]?.unpackedSize = nil
    }
    try ManifestFile.write(manifest, to: published + "/manifest.json")
}
