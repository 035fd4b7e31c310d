import CourseSearch
import FileSystem
import Foundation
import Manifest
import SafeText
import SyncClient
import ZipArchive

/// The offline navigation a sync writes beside the block folders: `index.html`, the course
/// outline (chapters → subsections → units → blocks) linking every installed page and marking
/// the others, and `_navigation/<n>.html`, one small frame page per installed page with
/// previous/next links in course order. Block archives stay as published: a page never names
/// its neighbours, so an edit to one block changes no other block's archive.
public enum OutlinePage {
    /// The published manifest as last synced (all blocks and the outline), kept so the page can
    /// name blocks that are not installed.
    static func publishedPath(courseRoot: String) -> String {
        courseRoot + "/" + ClientTarget.stateFolderName + "/published-manifest.json"
    }

    /// At most what the course's outline page and frame pages take (every offline block
    /// installed), and their folder: counted against the budget before the sync.
    static func estimatedBytes(for manifest: CourseManifest) -> UInt64 {
        let rendered = render(published: manifest, installed: Set(manifest.blocks.filter(\.isOffline).map(\.usageID)), searchIndex: "search/0/index.js")
        return rendered.frames.reduce(UInt64(rendered.outline.utf8.count) + DiskUsage.folderBytes) { $0 + UInt64($1.utf8.count) }
    }

    /// Writes `courseRoot/index.html` and `courseRoot/_navigation/`.
    /// `published`: the server's manifest when the caller holds it (at 100,000 blocks, reading
    /// the copy kept at `publishedPath` again takes seconds).
    static func write(_ local: CourseManifest, published known: CourseManifest? = nil, into courseRoot: String) throws(ClientError) {
        let published = known ?? (try? ManifestFile.read(publishedPath(courseRoot: courseRoot))) ?? local
        let installed = Set(local.blocks.filter { block in
            guard block.isOffline, let archive = block.archive, let folder = ArchivePath.installFolder(of: archive) else { return false }
            return FileManager.default.fileExists(atPath: courseRoot + "/" + folder + "/index.html")
        }.map(\.usageID))
        // The search box only when the index is on this device (a sync installs it with the course).
        let search = local.search.flatMap { ArchivePath.installFolder(of: $0.archive) }.map { $0 + "/" + SearchIndex.fileName }
            .flatMap { FileManager.default.fileExists(atPath: courseRoot + "/" + $0) ? $0 : nil }
        let rendered = render(published: published, installed: installed, searchIndex: search)
        do {
            try writeFrames(rendered.frames, into: courseRoot + "/" + ClientTarget.navigationFolderName)
            removeFolder(at: courseRoot + "/index.html")
            try Data(rendered.outline.utf8).write(to: URL(fileURLWithPath: courseRoot + "/index.html"), options: .atomic)
        } catch {
            throw .local(path: courseRoot + "/index.html", reason: "cannot write the outline page: \(error)")
        }
    }

    /// Writes `<n>.html` for each frame whose file does not already hold exactly its bytes, and
    /// removes everything else in the folder. A sync after a small change rewrites a few frames:
    /// at 100,000 pages, removing the folder and writing every frame again made the file system
    /// allocate 100,000 inodes just freed, most of a resync's time. Unsynced: nothing names
    /// these pages, and the settled record that would let the next sync skip them is written
    /// only after one `syncfs` (Foundation's write fsyncs each file, which for a course's
    /// thousand pages took longer than the sync).
    static func writeFrames(_ frames: [String], into navigation: String) throws(FileError) {
        var info = stat()
        if lstat(navigation, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR { ZipReader.removeTree(navigation) }
        if frames.isEmpty {
            ZipReader.removeTree(navigation)
            return
        }
        if mkdir(navigation, 0o755) != 0, errno != EEXIST { throw FileError(path: navigation, operation: "mkdir", errno: errno) }
        // What is not a frame goes first: nothing planted beside the frames (at a temporary
        // name of the writes below, say) is there when they are written.
        let names = frames.indices.map { "\($0 + 1).html" }
        let wanted = Set(names)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: navigation)) ?? [] where !wanted.contains(name) {
            ZipReader.removeTree(navigation + "/" + name)
        }
        for (name, frame) in zip(names, frames) {
            let bytes = Array(frame.utf8)
            let path = navigation + "/" + name
            if !holds(path, exactly: bytes) {
                removeFolder(at: path)
                // Where there is no `syncfs` to wait for them all before the settled record
                // (`ClientTarget.saveSettled`), each frame is synced.
                try DurableFile.replace(path, with: bytes, synced: SyncDurability.platformDefault == .perFile)
            }
        }
    }

    /// A folder where a page goes would refuse the rename that writes it, and every sync after.
    static func removeFolder(at path: String) {
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { ZipReader.removeTree(path) }
    }

    /// Whether `path` is a regular file (not a link) holding exactly `bytes`.
    static func holds(_ path: String, exactly bytes: [UInt8]) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size == bytes.count,
            let file = try? InputFile(path: path), let read = try? file.read(at: 0, count: bytes.count)
        else { return false }
        return read == bytes
    }

    /// The outline page's HTML and the frame pages', in course order. `searchIndex`: the
    /// installed search index's `index.js`, relative to the course folder, for the search box.
    public static func render(published: CourseManifest, installed: Set<String>, searchIndex: String? = nil) -> (outline: String, frames: [String]) {
        // Installed pages in course order, each with its frame page's number.
        let pages = published.blocks.filter { installed.contains($0.usageID) }
        let frameNumber = Dictionary(pages.enumerated().map { ($1.usageID, $0 + 1) }, uniquingKeysWith: { a, _ in a })
        let title = published.outline?.first { $0.type == "course" }?.displayName ?? published.courseID
        let body = outlineList(published, installed: installed, frameNumber: frameNumber)
        let searchSection = searchIndex.map { BrowserSearch.section(indexScript: href($0), installed: pages.map(\.usageID)) } ?? ""
        let start = pages.isEmpty ? "" : "<p><a href=\"\(ClientTarget.navigationFolderName)/1.html\">Read from the start, page by page</a></p>\n"
        let outline = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title))</title>
            <style>body{font-family:system-ui,sans-serif;max-width:48em;margin:1em auto;padding:0 1em;line-height:1.4}ul{list-style:none;padding-left:1em}h2,h3,h4{margin:.6em 0 .2em}.missing,.online,.path{color:#666}.snippet{font-size:.9em}#coursepack-search-results li{margin:.5em 0}</style>
            </head><body>
            <h1>\(escape(title))</h1>
            <p>\(pages.count) of \(published.blocks.filter(\.isOffline).count) pages on this device.</p>
            \(searchSection)\(start)<ul>
            \(body)</ul>
            </body></html>

            """
        return (outline, framePages(pages))
    }

    /// The outline's list items: containers as headings in course order, blocks as links to
    /// their pages; blocks no container reaches (an old manifest without outline) after them.
    static func outlineList(_ published: CourseManifest, installed: Set<String>, frameNumber: [String: Int]) -> String {
        let blocks = Dictionary(published.blocks.map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        let containers = Dictionary((published.outline ?? []).map { ($0.usageID, $0) }, uniquingKeysWith: { a, _ in a })
        var body = ""
        var seen = Set<String>()
        // `level` counts every container entered, the course too: the recursion stops at the
        // validated maximum even for an installed manifest no validation saw.
        func item(_ id: String, depth: Int, level: Int) {
            guard seen.insert(id).inserted else { return }
            if let container = containers[id] {
                guard level <= OutlineEntry.maximumDepth else { return }
                if container.type == "course" {
                    for child in container.children { item(child, depth: depth, level: level + 1) }
                    return
                }
                let heading = depth < 3 ? "h\(depth + 2)" : "p"
                body += "<li class=\"\(escape(container.type))\"><\(heading)>\(escape(container.displayName ?? container.type))</\(heading)>\n<ul>\n"
                for child in container.children { item(child, depth: depth + 1, level: level + 1) }
                body += "</ul></li>\n"
            } else if let block = blocks[id] {
                body += "<li class=\"block\">" + blockItem(block, installed: installed.contains(id), frame: frameNumber[id]) + "</li>\n"
            }
        }
        if let root = published.outline?.first(where: { $0.type == "course" }) {
            item(root.usageID, depth: 0, level: 1)
        }
        for block in published.blocks where !seen.contains(block.usageID) {
            body += "<li class=\"block\">" + blockItem(block, installed: installed.contains(block.usageID), frame: frameNumber[block.usageID]) + "</li>\n"
        }
        return body
    }

    /// One frame page per installed page, in course order: the page with links to the outline
    /// and to the previous and next pages.
    static func framePages(_ pages: [BlockEntry]) -> [String] {
        var frames: [String] = []
        for (index, page) in pages.enumerated() {
            guard let archive = page.archive, let folder = ArchivePath.installFolder(of: archive) else { continue }
            let name = escape(page.displayName ?? page.type)
            var links = "<a href=\"../index.html\">Outline</a>"
            if index > 0 { links += " <a rel=\"prev\" href=\"\(index).html\">← \(escape(pages[index - 1].displayName ?? "Previous"))</a>" }
            if index + 1 < pages.count { links += " <a rel=\"next\" href=\"\(index + 2).html\">\(escape(pages[index + 1].displayName ?? "Next")) →</a>" }
            frames.append("""
                <!DOCTYPE html>
                <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
                <title>\(name)</title>
                <style>html,body{margin:0;height:100%}body{display:flex;flex-direction:column;font-family:system-ui,sans-serif}nav{display:flex;flex-wrap:wrap;gap:1em;padding:.5em 1em;border-bottom:1px solid #ccc}iframe{flex:1;border:0;width:100%}</style>
                </head><body>
                <nav>\(links)</nav>
                <iframe src="../\(href(folder))/index.html" title="\(name)"></iframe>
                </body></html>

                """)
        }
        return frames
    }

    static func blockItem(_ block: BlockEntry, installed: Bool, frame: Int?) -> String {
        let name = escape(block.displayName ?? block.type)
        if installed, let archive = block.archive, let folder = ArchivePath.installFolder(of: archive) {
            let sequence = frame.map { " <a class=\"sequence\" href=\"\(ClientTarget.navigationFolderName)/\($0).html\" title=\"with previous and next\">⇄</a>" } ?? ""
            return "<a href=\"\(href(folder))/index.html\">\(name)</a>\(sequence)"
        }
        if block.isOffline { return "<span class=\"missing\">\(name) (not on this device)</span>" }
        return "<span class=\"online\">\(name) (online only: \(escape(block.reason ?? "needs the network")))</span>"
    }

    /// `TARGET/index.html`: every course of the target, linking its outline.
    static func writeTargetIndex(courses: [(folder: String, manifest: CourseManifest)], into root: String) throws(ClientError) {
        var items = ""
        for (folder, manifest) in courses.sorted(by: { $0.folder < $1.folder }) {
            let title = manifest.outline?.first { $0.type == "course" }?.displayName ?? manifest.courseID
            items += "<li><a href=\"\(href(folder))/index.html\">\(escape(title))</a></li>\n"
        }
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Courses on this device</title>
            <style>body{font-family:system-ui,sans-serif;max-width:48em;margin:1em auto;padding:0 1em}</style>
            </head><body>
            <h1>Courses on this device</h1>
            <ul>
            \(items)</ul>
            </body></html>

            """
        removeFolder(at: root + "/index.html")
        do {
            try Data(html.utf8).write(to: URL(fileURLWithPath: root + "/index.html"), options: .atomic)
        } catch {
            throw .local(path: root + "/index.html", reason: "cannot write: \(error)")
        }
    }

    /// ASCII letters, digits and `-._~+`: what `href` leaves as it is.
    private static func unencoded(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"): true
        default: false
        }
    }

    static func escape(_ text: String) -> String { HTMLEscape.escape(text) }

    /// A relative path as a URL path: each component percent-encoded.
    static func href(_ path: String) -> String {
        // Most paths need no encoding (`html/<hex>`): at 100,000 pages, building the allowed set
        // and encoding each component took a tenth of a sync's outline.
        let utf8 = path.utf8
        if let first = utf8.first, first != UInt8(ascii: "/"), utf8.last != UInt8(ascii: "/"), !path.contains("//"),
            utf8.allSatisfy({ byte in Self.unencoded(byte) || byte == UInt8(ascii: "/") })
        {
            return path
        }
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~+")
        return path.split(separator: "/").map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? String($0) }.joined(separator: "/")
    }
}
