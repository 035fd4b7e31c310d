import ClientTarget
import FileSystem
import Foundation
import Manifest
import Synchronization

/// The LMS's URL layout over the installed courses, for course scripts (HX-JS style) that find
/// their config and pages from `window.location`: `/courses/<course id>/…` mirrors the course
/// folder at the same depth, `jump_to`/`jump_to_id` and `courseware` URLs redirect to a block's
/// page, and `/static/…`, `/courses/<id>/static/…`, `/asset-v1:…` and `/c4x/…` answer a course
/// file from an installed block's `static/` copy. Every path it produces is served through
/// `TargetGuard`, so the target's safety rules apply to it unchanged.
final class LMSURLSpace: Sendable {
    let root: String
    /// Built on the first request that needs it.
    private let catalog = Mutex<(courses: [LMSCourse], stamp: [Int])?>(nil)

    init(root: String) { self.root = root }

    enum Route: Equatable {
        /// Not an LMS-shaped path: served as it is.
        case unchanged
        /// Served as this target path (decoded).
        case serve(String)
        /// 302 to this same-origin path.
        case redirect(String)
        /// The course has the block, or the LMS has the URL, but the device cannot show it.
        case onlineOnly(String)
        case missing(String)
    }

    func route(_ decoded: String, referer: String?) -> Route {
        let parts = decoded.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        guard let first = parts.first else { return .unchanged }
        if first == "courses", parts.count >= 2 {
            guard let course = courses().first(where: { $0.id == parts[1] }) else { return .missing("no installed course \(parts[1])") }
            return route(in: course, Array(parts.dropFirst(2)))
        }
        if first == "static", parts.count >= 2 {
            return asset(parts.dropFirst().joined(separator: "/"), in: courses(), referer: referer)
        }
        if first.hasPrefix("asset-v1:") { return assetKey(parts.joined(separator: "/"), referer: referer) }
        if first == "c4x", parts.count >= 5, parts[3] == "asset" {
            let candidates = courses().filter { $0.keyParts.prefix(2).elementsEqual([parts[1], parts[2]]) }
            return asset(parts.dropFirst(4).joined(separator: "/"), in: candidates, referer: referer)
        }
        return lmsShapedPage(parts)
    }

    /// A page that needs the LMS's URL, asked for by its plain path (`/<course folder>/<type>/
    /// <url_name>/` or its index.html): redirected to the same page under `/courses/<id>/`.
    /// Every other plain path stays as it is.
    func lmsShapedPage(_ parts: [String]) -> Route {
        guard parts.count >= 3, ["", "index.html"].contains(parts[parts.count - 1]) else { return .unchanged }
        let folder = parts.count == 4 ? "/" + parts[0] : ""
        let block = parts.suffix(3).prefix(2).joined(separator: "/")
        guard parts.count <= 4, let course = courses().first(where: { $0.folder == folder && $0.lmsShaped.contains(block) }) else {
            return .unchanged
        }
        return .redirect("/courses/" + course.id + "/" + block + "/index.html")
    }

    /// `rest`: what follows `/courses/<course id>/`.
    func route(in course: LMSCourse, _ rest: [String]) -> Route {
        switch rest.first {
        case nil:
            // The course's own folder: with its slash, so the outline's relative links resolve.
            return .redirect("/courses/" + course.id + "/")
        case "jump_to" where rest.count >= 2:
            return jump(to: rest.dropFirst().joined(separator: "/"), in: course)
        case "jump_to_id" where rest.count == 2:
            guard let id = course.usageID(forURLName: rest[1]) else { return .onlineOnly(rest[1]) }
            return jump(to: id, in: course)
        case "courseware":
            // `courseware/<chapter>/<sequential>/<position>`: the deepest block named wins.
            let named = rest.dropFirst().reversed().compactMap { course.usageID(forURLName: $0) }
            guard let id = named.first else { return jump(to: course.firstOutlineEntry ?? "", in: course) }
            return jump(to: id, in: course)
        case "static" where rest.count >= 2:
            return asset(rest.dropFirst().joined(separator: "/"), in: [course], referer: nil)
        default:
            return .serve(course.folder + "/" + rest.joined(separator: "/"))
        }
    }

    func jump(to usageID: String, in course: LMSCourse) -> Route {
        guard let page = course.page(for: usageID) else {
            // A block the course does not list may still be on the LMS: online only, too.
            return usageID.isEmpty ? .missing("the course lists no blocks") : .onlineOnly(usageID)
        }
        return .redirect("/courses/" + course.id + "/" + page + "/index.html")
    }

    /// `/asset-v1:ORG+NUM+RUN+type@asset+block@<file>`: the key names the course.
    func assetKey(_ key: String, referer: String?) -> Route {
        guard let marker = key.range(of: "+type@asset+block@") else { return .missing("not an asset key: \(key)") }
        let courseID = "course-v1:" + key[key.index(key.startIndex, offsetBy: "asset-v1:".count)..<marker.lowerBound]
        let file = String(key[marker.upperBound...])
        return asset(file, in: courses().filter { $0.id == courseID }, referer: referer)
    }

    /// The file from one of `candidates`: the course of the page that asked (its Referer) when
    /// that is one, else the only course that has it.
    func asset(_ file: String, in candidates: [LMSCourse], referer: String?) -> Route {
        let having = candidates.filter { $0.statics[file] != nil }
        if let referer = referer.flatMap(refererCourse), let served = having.first(where: { $0.id == referer.id })?.statics[file] {
            return .serve(served)
        }
        guard having.count == 1, let served = having[0].statics[file] else {
            return .missing(having.isEmpty ? "no installed course has \(file)" : "several courses have \(file): open it from a course page")
        }
        return .serve(served)
    }

    /// The course a page's URL is in: `/courses/<id>/…` or `/<course folder>/…`.
    func refererCourse(_ referer: String) -> LMSCourse? {
        guard let path = URLComponents(string: referer)?.percentEncodedPath.removingPercentEncoding else { return nil }
        let parts = path.split(separator: "/").map(String.init)
        if parts.first == "courses", parts.count >= 2 { return courses().first { $0.id == parts[1] } }
        return courses().first { !$0.folder.isEmpty && $0.folder == "/" + (parts.first ?? "") }
    }

    /// The installed course a served page belongs to (its folder on disk) and the block the page
    /// shows; a nil block: the course's outline. Nil for any other path (the course list, a
    /// navigation frame, a file).
    func page(at path: String) -> (courseRoot: String, usageID: String?)? {
        guard path.utf8.count <= 4096, let decoded = path.removingPercentEncoding, decoded.hasPrefix("/") else { return nil }
        var served = decoded
        if case .serve(let target) = route(decoded, referer: nil) { served = target.hasPrefix("/") ? target : "/" + target }
        for course in courses().sorted(by: { $0.folder.count > $1.folder.count }) {
            guard served.hasPrefix(course.folder + "/") else { continue }
            var rest = String(served.dropFirst(course.folder.count + 1))
            if rest.hasSuffix("index.html") { rest.removeLast("index.html".count) }
            if rest.hasSuffix("/") { rest.removeLast() }
            if rest.isEmpty { return (root + course.folder, nil) }
            guard let usageID = course.pages.first(where: { $0.value == rest })?.key else { return nil }
            return (root + course.folder, usageID)
        }
        return nil
    }

    /// The installed courses, built again when the target's state or a course's manifest has
    /// changed since (a sync that ran while serving added, removed or updated a course).
    func courses() -> [LMSCourse] {
        catalog.withLock { catalog in
            if let catalog, catalog.stamp == stamp(of: catalog.courses) { return catalog.courses }
            let found = Self.readCourses(ClientTarget(root: root))
            // The manifests read for it are gone: at 92,000 blocks, 700 MB the server kept.
            FreedMemory.returnToSystem()
            catalog = (found, stamp(of: found))
            return found
        }
    }

    /// Each installed course's index, its manifest read and let go one at a time.
    static func readCourses(_ target: ClientTarget) -> [LMSCourse] {
        guard let folders = try? target.courseFolders() else { return [] }
        return folders.compactMap { folder in
            guard let manifest = try? ManifestFile.read(folder + "/manifest.json") else { return nil }
            return LMSCourse(id: manifest.courseID, folder: String(folder.dropFirst(target.root.count)), root: target.root, manifest: manifest).compacted()
        }
    }

    /// Size and modification time of the files the catalog was read from.
    func stamp(of courses: [LMSCourse]) -> [Int] {
        let files = [root + "/" + ClientTarget.stateFolderName + "/target.json"] + courses.map { root + $0.folder + "/manifest.json" }
        return files.flatMap { file -> [Int] in
            var info = stat()
            guard stat(file, &info) == 0 else { return [-1] }
            return [Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
        }
    }
}
