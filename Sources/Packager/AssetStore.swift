import Crypto
import CourseExport
import Foundation
import LinkRewriter
import Synchronization
import ZipArchive

/// Per-build memory of the course's static files, shared by all workers: each file is hashed
/// once, each text file compressed once, and each stylesheet rewritten once, however many
/// blocks include it.
final class AssetStore: Sendable {
    /// Text files up to this size are compressed once and their bytes reused in every archive;
    /// larger files stream from disk each time.
    static let preparedLimit = 4 << 20
    /// Media is stored as it is, so holding it saves only the reads: worth it for the small
    /// images many pages share (logos, icons, backgrounds), not for photos and videos.
    static let preparedMediaLimit = 256 << 10
    /// Prepared bytes are held for the whole build; past this total, files stream instead, so
    /// memory stays bounded whatever the course holds.
    static let preparedBudget = 64 << 20

    let export: ExportDirectory
    let course: Course
    let writer: ZipWriter
    private let hashes = Mutex<[String: String]>([:])
    private let prepared = Mutex<[String: PreparedEntry]>([:])
    private let stylesheets = Mutex<[String: Stylesheet]>([:])
    private let previousHashes: HashCache
    private let stamps = Mutex<[String: HashCache.Record]>([:])
    private let preparedBytes = Mutex(0)

    init(export: ExportDirectory, course: Course, writer: ZipWriter, previousHashes: HashCache = HashCache()) {
        self.export = export
        self.course = course
        self.writer = writer
        self.previousHashes = previousHashes
    }

    /// What this build learned, for the next one.
    var hashCache: HashCache {
        HashCache(writtenAt: 0, records: stamps.withLock { $0 })
    }

    /// A bundled stylesheet with its references rewritten relative to where it lands.
    struct Stylesheet: Sendable {
        let bytes: [UInt8]
        let dependencies: [String]
        let unresolved: [String]
    }

    static func isStylesheet(_ path: String) -> Bool { path.lowercased().hasSuffix(".css") }

    func filePath(_ staticPath: String) throws -> String {
        try export.regularFile("static/" + staticPath)
    }

    /// SHA-256 of the file's bytes as they go into bundles (rewritten, for stylesheets).
    func contentHash(_ staticPath: String) throws -> String {
        if let known = hashes.withLock({ $0[staticPath] }) { return known }
        let digest: String
        if Self.isStylesheet(staticPath) {
            digest = Digest.hex(SHA256.hash(data: try stylesheet(staticPath).bytes))
        } else {
            let path = try filePath(staticPath)
            let stamp = FileStamp.of(path)
            if let stamp, let cached = previousHashes.hash(of: staticPath, stamp: stamp) {
                digest = cached
            } else {
                digest = try Digest.file(path)
            }
            if let stamp {
                stamps.withLock { $0[staticPath] = HashCache.Record(stamp, sha256: digest) }
            }
        }
        hashes.withLock { $0[staticPath] = digest }
        return digest
    }

    /// How the file goes into an archive: compressed bytes shared across archives for small
    /// text files, a streamed file for everything else.
    func source(_ staticPath: String) throws -> ZipEntry.Source {
        if let known = prepared.withLock({ $0[staticPath] }) { return .prepared(known) }
        let bytes: [UInt8]
        if Self.isStylesheet(staticPath) {
            bytes = try stylesheet(staticPath).bytes
        } else {
            let path = try filePath(staticPath)
            let limit = CompressionPolicy.isPrecompressed(staticPath) ? Self.preparedMediaLimit : Self.preparedLimit
            guard let size = FileStamp.of(path)?.size, size <= limit, reserve(Int(size)) else {
                return .file(path: path)
            }
            bytes = try export.read("static/" + staticPath)
        }
        let entry = try writer.prepare(bytes, name: staticPath)
        // Two workers may prepare the same file at once; the first one kept is the one used.
        return .prepared(prepared.withLock { known in
            if let first = known[staticPath] { return first }
            known[staticPath] = entry
            return entry
        })
    }

    /// Takes `size` bytes from the prepared-bytes budget, if that much is left.
    private func reserve(_ size: Int) -> Bool {
        preparedBytes.withLock { used in
            guard used + size <= Self.preparedBudget else { return false }
            used += size
            return true
        }
    }

    func stylesheet(_ staticPath: String) throws -> Stylesheet {
        if let known = stylesheets.withLock({ $0[staticPath] }) { return known }
        let original = try export.read("static/" + staticPath)
        let folder = staticPath.split(separator: "/").dropLast().joined(separator: "/")
        var dependencies: [String] = []
        var unresolved: [String] = []
        let rewritten = LinkRewriter.rewrite(original, references: LinkRewriter.references(in: original, as: .css)) { reference in
            let target = LinkTarget.classify(reference.url)
            let found: String?
            switch target {
            case .asset(let name, _):
                found = course.staticFiles.resolve(name)
            case .relative(let path, _):
                // A relative url() inside a bundled stylesheet points next to it, inside static/.
                if let relative = RelativePath.resolve(path, from: folder), course.staticFiles.paths.contains(relative) {
                    dependencies.append(relative)
                }
                return .keep
            default:
                return .keep
            }
            guard let found else {
                unresolved.append(reference.url)
                return .keep
            }
            dependencies.append(found)
            let suffix: String
            if case .asset(_, let s) = target { suffix = s } else { suffix = "" }
            return .replace(RelativePath.link(to: found, from: folder) + suffix)
        }
        // A stylesheet names the same image in many rules; each file is bundled once.
        let sheet = Stylesheet(bytes: rewritten, dependencies: Array(Set(dependencies)).sorted(), unresolved: Array(Set(unresolved)).sorted())
        stylesheets.withLock { $0[staticPath] = sheet }
        return sheet
    }
}

enum Digest {
    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// SHA-256 of a course file, read in fixed-size chunks.
    static func file(_ path: String) throws -> String {
        guard let digest = try? sha256(path) else { throw CourseError.unreadable(path: path, reason: "cannot read it") }
        return digest
    }

    /// SHA-256 of an archive this build wrote or published: a failure is about the output
    /// folder, not the course.
    static func archive(_ path: String) throws(BuildError) -> String {
        guard let digest = try? sha256(path) else { throw .output(path: path, reason: "cannot read the archive back to hash it") }
        return digest
    }

    private static func sha256(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoPermission)
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hex(hasher.finalize())
    }
}

/// Relative links between files inside one bundle.
enum RelativePath {
    /// `path` relative to `folder` (both under static/), percent-encoded for use in a link.
    static func link(to path: String, from folder: String) -> String {
        let from = folder.split(separator: "/")
        let to = path.split(separator: "/")
        var common = 0
        while common < from.count, common < to.count - 1, from[common] == to[common] { common += 1 }
        let ups = Array(repeating: "..", count: from.count - common)
        return PercentEncoding.encodePath((ups + to[common...].map(String.init)).joined(separator: "/"))
    }

    /// Joins a relative reference onto `folder`; nil when it climbs out of static/ or is absolute.
    static func resolve(_ reference: String, from folder: String) -> String? {
        guard !reference.isEmpty, !reference.hasPrefix("/") else { return nil }
        var parts = folder.split(separator: "/").map(String.init)
        for part in reference.split(separator: "/") {
            switch part {
            case ".": continue
            case "..":
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            default: parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }
}
