import Foundation
import Manifest

/// One installed course as the LMS's URLs name it: its id, the folder it is served from, and
/// where each of its blocks' pages and static files is. Built once per serve (and again after
/// a sync changes the course) from the local manifest, which it does not keep: at 92,000
/// blocks the manifest held 700 MB for the server's life, and the first LMS URL took 15 s,
/// most of it listing every block's `static/` folder, which the blocks' listings already name.
struct LMSCourse: Sendable {
    let id: String
    /// The served path of the course folder ("" when the target is the course folder itself).
    let folder: String
    /// Usage id → installed block folder, relative to the course folder (`html/welcome_page`).
    let pages: [String: String]
    /// Static file name → served path of one installed block's copy: each block keeps the
    /// course files it uses in its own `static/`, so any copy is the course's file. Both the
    /// path (`images/logo.png`) and the asset key's flattened form (`images_logo.png`) name it.
    let statics: [String: String]
    /// Installed block folders whose page declares it needs the LMS's page (`lms:` in
    /// requires_network): their scripts read the course id from the URL, so serve opens them
    /// in the LMS's shape.
    let lmsShaped: Set<String>
    /// The outline: each container's children, and its first entry (the course), where a
    /// courseware URL that names no block opens.
    let children: [String: [String]]
    let firstOutlineEntry: String?
    /// url_name → usage id: of the first block listing it, else of the first container.
    let urlNames: [String: String]

    init(id: String, folder: String, root: String, manifest: CourseManifest) {
        self.id = id
        self.folder = folder
        var pages: [String: String] = [:]
        var exact: [String: String] = [:]
        var flattened: [String: String] = [:]
        var lmsShaped: Set<String> = []
        for block in manifest.blocks where block.isOffline {
            guard let archive = block.archive, let installed = ArchivePath.installFolder(of: archive) else { continue }
            guard FileManager.default.fileExists(atPath: root + folder + "/" + installed + "/index.html") else { continue }
            pages[block.usageID] = installed
            if (block.requiresNetwork ?? []).contains(where: { $0.hasPrefix("lms:") }) { lmsShaped.insert(installed) }
            for file in Self.staticFiles(of: block, installedAt: root + folder + "/" + installed) {
                let served = folder + "/" + installed + "/static/" + file
                if exact[file] == nil { exact[file] = served }
                let flat = Self.flattened(file)
                if flattened[flat] == nil { flattened[flat] = served }
            }
        }
        self.pages = pages
        // A file really named `a_b.png` wins over `a/b.png` flattened.
        self.statics = exact.merging(flattened) { real, _ in real }
        self.lmsShaped = lmsShaped
        let outline = manifest.outline ?? []
        children = Dictionary(outline.map { ($0.usageID, $0.children) }, uniquingKeysWith: { first, _ in first })
        firstOutlineEntry = outline.first?.usageID
        var urlNames: [String: String] = [:]
        for usageID in manifest.blocks.lazy.map(\.usageID) + outline.lazy.map(\.usageID) {
            let name = Self.urlName(of: usageID)
            if urlNames[name] == nil { urlNames[name] = usageID }
        }
        self.urlNames = urlNames
    }

    /// The same index in memory of its own: each string and table allocated anew. Made while
    /// the manifest it was read from is still alive, the copy lands past the manifest's memory
    /// rather than among its freed pieces, so that memory can go back to the system whole; the
    /// first index, its strings scattered through the manifest's, kept 500 MB of it resident.
    func compacted() -> LMSCourse {
        func copy(_ string: String) -> String { String(decoding: Array(string.utf8), as: UTF8.self) }
        func copy(_ table: [String: String]) -> [String: String] {
            var copied: [String: String] = [:]
            copied.reserveCapacity(table.count)
            for (key, value) in table { copied[copy(key)] = copy(value) }
            return copied
        }
        var children: [String: [String]] = [:]
        children.reserveCapacity(self.children.count)
        for (key, value) in self.children { children[copy(key)] = value.map(copy) }
        return LMSCourse(
            id: copy(id), folder: copy(folder), pages: copy(pages), statics: copy(statics), lmsShaped: Set(lmsShaped.map(copy)),
            children: children, firstOutlineEntry: firstOutlineEntry.map(copy), urlNames: copy(urlNames))
    }

    private init(
        id: String, folder: String, pages: [String: String], statics: [String: String], lmsShaped: Set<String>,
        children: [String: [String]], firstOutlineEntry: String?, urlNames: [String: String]
    ) {
        (self.id, self.folder, self.pages, self.statics, self.lmsShaped) = (id, folder, pages, statics, lmsShaped)
        (self.children, self.firstOutlineEntry, self.urlNames) = (children, firstOutlineEntry, urlNames)
    }

    /// The files under an installed block's `static/`, sorted: from its listing when the
    /// manifest has one (what the sync installed, path for path), else from its folder.
    static func staticFiles(of block: BlockEntry, installedAt folder: String) -> [String] {
        let prefix = "static/"
        if let listing = block.files {
            return listing.keys.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.sorted()
        }
        let found = FileManager.default.enumerator(atPath: folder + "/static")?.allObjects as? [String] ?? []
        return found.sorted()
    }

    /// `images/logo.png` → `images_logo.png`, as the LMS flattens an asset's path into its key.
    static func flattened(_ path: String) -> String {
        String(decoding: path.utf8.map { $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
    }

    /// The installed page that stands for a block: its own, else the first one found depth
    /// first under it in the outline (a unit or a section opens at its first page).
    func page(for usageID: String) -> String? {
        if let own = pages[usageID] { return own }
        var pending = children[usageID] ?? []
        var seen: Set<String> = [usageID]
        while !pending.isEmpty {
            let next = pending.removeFirst()
            guard seen.insert(next).inserted else { continue }
            if let page = pages[next] { return page }
            pending.insert(contentsOf: children[next] ?? [], at: 0)
        }
        return nil
    }

    /// The usage id of the block an LMS URL names by its url_name, if the course has it.
    func usageID(forURLName name: String) -> String? {
        urlNames[name]
    }

    static func urlName(of usageID: String) -> String {
        if let range = usageID.range(of: "block@", options: .backwards) { return String(usageID[range.upperBound...]) }
        return String(usageID.split(separator: "/").last ?? Substring(usageID))
    }

    /// `course-v1:ORG+NUM+RUN` → ["ORG", "NUM", "RUN"]; old `ORG/NUM/RUN` ids too.
    var keyParts: [String] {
        let bare = id.hasPrefix("course-v1:") ? String(id.dropFirst("course-v1:".count)) : id
        return bare.split(whereSeparator: { $0 == "+" || $0 == "/" }).map(String.init)
    }
}
