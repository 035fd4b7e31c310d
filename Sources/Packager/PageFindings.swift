import Diagnostics

/// What one page's references are found to need, each kept to a bound: a page or a stylesheet
/// with millions of broken or external references once held a warning, a looked-up name and a
/// network load for each, in memory, in the build's state and in the manifest (a 57 MB page of
/// 3.8 million broken images took 4.6 GB to build and left 1.6 GB of state). Past the bound a
/// list says how much it left out, or (for looked-up names) that the page depends on them all.
struct PageFindings {
    /// Warnings listed per block; the rest are counted in one more warning.
    static let warningLimit = 20
    /// Distinct network loads a block's manifest entry lists, each a URL of at most
    /// `networkURLLimit` bytes: 100 URLs of 100 KB from one stylesheet, in 20 blocks, once made
    /// a 200 MB manifest part.
    static let networkLimit = 100
    static let networkURLLimit = 2048
    /// Distinct names a page looks up among the other blocks before its memo depends on all of
    /// them (`LookedUpLinks.everyTarget`).
    static let lookupLimit = 4096

    private(set) var warnings: [Diagnostic] = []
    private(set) var warningsLeftOut = 0
    private(set) var network: [String] = []
    private var networkSeen = Set<String>()
    private(set) var networkLeftOut = 0

    init(network: [String] = []) { addNetwork(network) }

    mutating func warn(_ warning: Diagnostic) {
        if warnings.count < Self.warningLimit { warnings.append(warning) } else { warningsLeftOut += 1 }
    }

    /// One warning per reference, made only for those that will be listed.
    mutating func warn(each references: [String], _ warning: (String) -> Diagnostic) {
        let room = max(0, Self.warningLimit - warnings.count)
        warnings += references.prefix(room).map(warning)
        warningsLeftOut += max(0, references.count - room)
    }

    mutating func addNetwork(_ urls: some Sequence<String>) {
        for url in urls where !networkSeen.contains(url) {
            // Past the limit, loads are counted, not remembered: repeats count again.
            guard network.count < Self.networkLimit, url.utf8.count <= Self.networkURLLimit else {
                networkLeftOut += 1
                continue
            }
            networkSeen.insert(url)
            network.append(url)
        }
    }

    /// The warnings to report for `block`, with one that counts those left out.
    func reported(block: String, file: String) -> [Diagnostic] {
        var all = warnings
        if warningsLeftOut > 0 {
            all.append(Diagnostic(
                block: block, file: file,
                message: "\(warningsLeftOut) more warnings of this block are not listed (a block lists its first \(Self.warningLimit))"))
        }
        if networkLeftOut > 0 {
            all.append(Diagnostic(
                block: block, file: file,
                message: "\(networkLeftOut) more network loads of the page, repeats included, are not listed in its manifest entry (it lists \(Self.networkLimit) distinct URLs of at most \(Self.networkURLLimit) bytes)"))
        }
        return all
    }
}

/// The names a page's links look up among the other blocks (jump targets, online targets), which
/// its memo records so that the page is made again when one of them lands elsewhere.
struct LookedUpLinks {
    /// Recorded instead of the names when a page looks up more than `PageFindings.lookupLimit`:
    /// its inputs then cover every target of the course. NUL is in no url_name (XML has none).
    static let everyTarget = "\u{0}every-target"

    private(set) var names = Set<String>()
    private(set) var overflowed = false

    mutating func insert(_ name: String) {
        guard !overflowed, !names.contains(name) else { return }
        guard names.count < PageFindings.lookupLimit else {
            overflowed = true
            names = []
            return
        }
        names.insert(name)
    }

    /// What the memo records: the names, sorted, or `everyTarget`.
    var recorded: [String] { overflowed ? [Self.everyTarget] : names.sorted() }
}
