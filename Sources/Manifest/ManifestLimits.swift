import FileSystem

/// What a client accepts of a manifest, in one place: the sync refuses a manifest or an index
/// that breaks these, the builder refuses to publish one (CP332), and `verify` and `publish`
/// report one, each by `ManifestIndex.clientRefusals`.
public struct ManifestLimits: Sendable, Equatable {
    /// A server's `manifest.json`, index or part larger than this is refused: a hostile or
    /// broken server cannot make a client hold more than this in memory for one file.
    public var maximumFileSize = 64 << 20
    /// All of a split manifest's parts together, which bounds what a client assembles.
    public var maximumSplitSize: UInt64 = 1 << 30
    /// The most parts an index may name (`ManifestSplit.maximumParts`).
    public var maximumParts: Int { ManifestSplit.maximumParts }

    public init() {}

    /// The defaults, lowered (never raised) by `LoweredLimits` (`manifest`, `split`).
    public static var current: ManifestLimits {
        var limits = ManifestLimits()
        limits.maximumFileSize = LoweredLimits.lowered(limits.maximumFileSize, by: "manifest")
        limits.maximumSplitSize = LoweredLimits.lowered(limits.maximumSplitSize, by: "split")
        return limits
    }

    /// Every limit, for a build's inputs: where parts are cut and whether `manifest.json` is
    /// written depend on them.
    public var fingerprint: String { "manifest=\(maximumFileSize),split=\(maximumSplitSize),parts=\(maximumParts)" }

    /// The file limit as an error message shows it.
    public var shownFileSize: String { maximumFileSize % (1 << 20) == 0 ? "\(maximumFileSize >> 20) MiB" : "\(maximumFileSize) bytes" }

    /// What a build may put in one part by its entries' bounds (`partBytesBound`): a quarter of
    /// what a client accepts, so that a part whose entries fall short of their bounds by any
    /// amount still fits.
    public var partBytesBudget: Int { max(1, maximumFileSize / 4) }
}

/// One reason every client refuses a split manifest: the file concerned (relative to the
/// publish's root) and what is wrong with it.
public struct ManifestRefusal: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var message: String

    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }

    public var description: String { "\(file): \(message)" }
}

extension ManifestIndex {
    /// Everything that makes a client refuse this index before it reads a part, in the order
    /// it checks them: too many parts, a part not named by a SHA-256 (its path would leave
    /// `manifest/`) or holding nothing, a part or the index over the file limit, the parts
    /// together over the split limit. `indexSize`: the index file's bytes; `planned`: of a
    /// manifest not yet published ("would be").
    public func clientRefusals(indexSize: Int, limits: ManifestLimits = .current, planned: Bool = false) -> [ManifestRefusal] {
        let (be, name, add) = planned ? ("would be", "would name", "would add") : ("is", "names", "add")
        var refusals: [ManifestRefusal] = []
        func refuse(_ file: String, _ message: String) { refusals.append(ManifestRefusal(file: file, message: message)) }
        if indexSize > limits.maximumFileSize {
            refuse(Self.fileName, "\(be) \(indexSize) bytes, more than the \(limits.maximumFileSize) a client accepts")
        }
        if parts.count > limits.maximumParts {
            refuse(Self.fileName, "\(name) \(parts.count) parts, more than the \(limits.maximumParts) a client reads")
        }
        var total: UInt64 = 0
        for part in parts {
            guard PartReference.isSHA256(part.sha256) else {
                refuse(Self.fileName, "\(name) a part \"\(part.sha256.prefix(80))\" that is not a sha256 (64 lowercase hex digits)")
                continue
            }
            if part.blocks < 0 || part.containers < 0 || (part.blocks == 0 && part.containers == 0) {
                refuse(Self.fileName, "\(name) part \(part.path) with \(part.blocks) blocks and \(part.containers) outline entries")
            }
            if part.size > UInt64(limits.maximumFileSize) {
                refuse(part.path, "\(be) \(part.size) bytes (\(part.blocks) blocks, \(part.containers) containers), more than the \(limits.maximumFileSize) a client accepts")
            }
            total &+= part.size
        }
        if total > limits.maximumSplitSize {
            refuse(ManifestPart.folder, "the parts \(add) up to \(total) bytes, more than the \(limits.maximumSplitSize) a client assembles")
        }
        return refusals
    }
}

extension PartReference {
    /// 64 lowercase hex digits: the only names a part may have.
    public static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
