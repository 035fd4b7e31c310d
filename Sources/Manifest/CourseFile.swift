/// One course file content (an image, a style sheet, a page's `index.html`), published once under
/// its content hash and shared by every block, runtime or search index whose folder holds it.
///
/// The manifest's top-level `files` maps the SHA-256 (hex) of a content to its `CourseFile`; a
/// block's `files` maps each path in its folder to such a hash. A client downloads each missing
/// content once, from `CourseFile.path(sha256:encoding:)`, checks it, keeps one copy per content
/// and links it into every folder that names it. The block's own archive stays self-contained
/// for clients that read only `offline_download` (the official apps).
public struct CourseFile: Codable, Sendable, Equatable {
    /// How the published file holds the content.
    public enum Encoding: String, Codable, Sendable, CaseIterable {
        /// A single gzip member (RFC 1952): its deflate stream and CRC-32 are the ones the
        /// block archives use, so archives copy them without compressing again.
        case gzip
    }

    /// Bytes of the content: what a folder holds once it is unpacked.
    public var size: UInt64
    /// Bytes of the published file: what a client downloads (equal to `size` when it is stored
    /// as it is).
    public var compressedSize: UInt64
    /// Absent when the published file is the content as it is (media, which does not compress).
    public var encoding: Encoding?

    public init(size: UInt64, compressedSize: UInt64, encoding: Encoding?) {
        self.size = size
        self.compressedSize = compressedSize
        self.encoding = encoding
    }

    /// The manifest's folder for published course files.
    public static let folder = "files"

    /// `files/<first 2 hex digits>/<sha256>`, with `.gz` when gzip-encoded: relative to the
    /// manifest. Derived, never read from the manifest, so a hostile manifest cannot point a
    /// content anywhere else.
    public static func path(sha256: String, encoding: Encoding?) -> String {
        let suffix = encoding == .gzip ? ".gz" : ""
        return "\(folder)/\(sha256.prefix(2))/\(sha256)\(suffix)"
    }

    /// This content's published path.
    public func path(sha256: String) -> String { Self.path(sha256: sha256, encoding: encoding) }

    /// Whether `text` is a content key: 64 lowercase hex digits.
    public static func isContentKey(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    enum CodingKeys: String, CodingKey {
        case size
        case compressedSize = "compressed_size"
        case encoding
    }
}

/// What a folder on the device holds, by content: path inside the folder (`index.html`,
/// `static/images/map.png`) → SHA-256 of the content, a key of the manifest's `files`. A block,
/// the runtime and the search index each carry one, so a client builds any of them the same way.
public typealias FileListing = [String: String]
