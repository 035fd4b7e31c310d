import Foundation
import Manifest

/// Small manifests written by hand: what a server could offer or a target hold.
enum Fixture {
    static let course = "course-v1:O+N+r"
    static let unit = "block-v1:O+N+r+type@vertical+block@v"
    static let otherUnit = "block-v1:O+N+r+type@vertical+block@w"

    static func usageID(_ name: String, type: String = "html") -> String { "block-v1:O+N+r+type@\(type)+block@\(name)" }

    /// A plausible sha256 or content hash, distinct per `seed`.
    static func digest(_ seed: Int) -> String { String(format: "%064x", seed) }

    /// An offline block `<type>/<name>.zip`; `version` changes both hashes, as a new publish of changed content does.
    static func block(
        _ name: String, type: String = "html", version: Int = 1, size: UInt64 = 100, parents: [String] = [unit],
        archive: String? = nil, runtime: String? = nil
    ) -> BlockEntry {
        BlockEntry(
            usageID: usageID(name, type: type), type: type, displayName: name, parents: parents,
            archive: archive ?? "\(type)/\(name).zip", size: size, sha256: digest(version), contentHash: digest(1000 + version),
            lastModified: "2026-11-22T10:00:00Z", runtime: runtime)
    }

    /// A block the server lists as needing the network: no archive.
    static func onlineOnly(_ name: String, type: String = "discussion", parents: [String] = [unit]) -> BlockEntry {
        BlockEntry(usageID: usageID(name, type: type), type: type, displayName: name, parents: parents, offline: false, reason: "discussions need the network")
    }

    static func manifest(_ blocks: [BlockEntry], runtime: RuntimeArchive? = nil) -> CourseManifest {
        CourseManifest(courseID: course, publishedAt: "2026-11-22T10:00:00Z", generator: "coursepack 0.1.0", blocks: blocks, runtime: runtime)
    }

    static func runtime(_ name: String = "0123456789abcdef", size: UInt64 = 500) -> RuntimeArchive {
        RuntimeArchive(archive: "runtime/\(name).zip", size: size, sha256: digest(7), contentHash: digest(8))
    }
}
