import BlockRenderer
import Foundation
import Manifest
import Packager
import Testing
import TestSupport

/// A missed dependency would silently serve stale pages, so incremental builds are held to one
/// property: after any edit, building over the previous publish gives exactly the bytes a build
/// from scratch gives. Edits are random (html, static files, scripts, stylesheets, policies,
/// course structure, page templates), applied one at a time to a copy of a real course.
///
/// `COURSEPACK_PROPERTY_EDITS` sets how many edits in all (`make bench` runs 300); most go to
/// the example course, a twenty-fifth to the demo course, whose builds take longer.
@Suite struct IncrementalPropertyTests {
    static let publishedAt = "2026-11-22T10:00:00Z"
    static let defaultEdits = 200

    static var totalEdits: Int {
        ProcessInfo.processInfo.environment["COURSEPACK_PROPERTY_EDITS"].flatMap { Int($0) }.map { max($0, 2) } ?? defaultEdits
    }

    static var runs: [(String, Int, UInt64)] {
        let demo = max(8, totalEdits / 25)
        return [("example", max(1, totalEdits - demo), UInt64(11)), ("demo", demo, UInt64(12))]
    }

    @Test(arguments: IncrementalPropertyTests.runs)
    func anIncrementalBuildEqualsAFreshOneAfterEveryEdit(course name: String, edits: Int, seed: UInt64) throws {
        let course = TestSupport.temporaryFolder("property") + "/course"
        try TestSupport.copy(name == "demo" ? TestSupport.demoCourse : TestSupport.exampleCourse, to: course)
        // Page templates live outside the course, as `--templates DIR` does; edits reach them too.
        let templates = TestSupport.temporaryFolder("property") + "/templates"
        try TestSupport.copy(TestSupport.packageRoot + "/Templates", to: templates)
        let incremental = TestSupport.temporaryFolder("property") + "/published"
        try Self.build(course, templates: templates, into: incremental)
        var random = SeededGenerator(state: seed)
        var editor = CourseEditor(root: course, templates: templates)
        for step in 0..<edits {
            let edit = try editor.apply(step, using: &random)
            try Self.build(course, templates: templates, into: incremental)
            let fresh = TestSupport.temporaryFolder("property") + "/fresh"
            try Self.build(course, templates: templates, into: fresh)
            let difference = Self.difference(incremental, fresh)
            #expect(difference == nil, "after edit \(step) (\(edit)): \(difference ?? "")")
            try? FileManager.default.removeItem(atPath: fresh)
            try? FileManager.default.removeItem(atPath: BuildOptions.defaultStateFolder(forOutput: fresh))
            if difference != nil { break }
        }
        let expectedKinds = min(CourseEditor.allKinds.count, edits / 4)
        #expect(editor.kinds.count >= expectedKinds, "every kind of edit was tried: \(editor.kinds.sorted())")
    }

    static func build(_ course: String, templates: String, into folder: String) throws {
        let options = try BuildOptions(
            outputFolder: folder, publishedAt: publishedAt, jobs: 2, templates: try PageTemplates.overriding(with: templates))
        _ = try CoursePackager(options: options).build(coursePath: course)
    }

    /// The first file whose presence or bytes differ between two published folders (what a
    /// client sees: the manifest and what it names; build state is not the publish).
    static func difference(_ a: String, _ b: String) -> String? {
        let left = TestSupport.files(under: a).filter { !$0.hasPrefix(".") }, right = TestSupport.files(under: b).filter { !$0.hasPrefix(".") }
        if left != right { return "files differ: \(Set(left).symmetricDifference(right).sorted().prefix(5))" }
        for file in left where TestSupport.read(a + "/" + file) != TestSupport.read(b + "/" + file) {
            return "\(file) differs"
        }
        return nil
    }
}

/// Random edits of an OLX export, of every kind a course team makes.
struct CourseEditor {
    let root: String
    let templates: String
    var kinds = Set<String>()

    static let allKinds = [
        "html", "static", "script", "stylesheet", "policy", "add-block", "remove-block", "move-block", "new-static", "template", "same-size-html",
    ]

    init(root: String, templates: String) {
        self.root = root
        self.templates = templates
    }

    func files(_ folder: String, _ suffix: String) -> [String] {
        TestSupport.files(under: root + "/" + folder).filter { $0.hasSuffix(suffix) }.map { folder + "/" + $0 }.sorted()
    }

    func text(_ path: String) -> String { String(decoding: TestSupport.read(root + "/" + path), as: UTF8.self) }

    func write(_ path: String, _ text: String) throws { try TestSupport.write([path: text], under: root) }

    mutating func apply(_ step: Int, using random: inout SeededGenerator) throws -> String {
        let kind = Self.allKinds.randomElement(using: &random)!
        kinds.insert(kind)
        switch kind {
        case "html":
            guard let page = files("html", ".html").randomElement(using: &random) else { return "none" }
            try write(page, text(page) + "\n<p>Edit \(step).</p>\n")
            return "html \(page)"
        case "static":
            // Same size, new bytes, and the old modification time: only content and ctime change.
            let candidates = files("static", "").filter { !$0.hasSuffix(".css") && !$0.hasSuffix(".html") && !$0.hasSuffix(".js") }
            guard let file = candidates.randomElement(using: &random) else { return "none" }
            let path = root + "/" + file
            var bytes = TestSupport.read(path)
            guard !bytes.isEmpty else { return "none" }
            var info = stat()
            stat(path, &info)
            let index = Int.random(in: 0..<bytes.count, using: &random)
            bytes[index] ^= 0x5A
            try TestSupport.writeBytes(bytes, to: path)
            var times = [info.st_atim, info.st_mtim]
            utimensat(AT_FDCWD, path, &times, 0)
            return "static \(file) byte \(index)"
        case "stylesheet":
            guard let sheet = files("static", ".css").randomElement(using: &random) else { return "none" }
            let images = files("static", ".png").map { String($0.dropFirst("static/".count)) }
            let image = images.randomElement(using: &random).map { "/static/" + $0 } ?? "none.png"
            try write(sheet, text(sheet) + "\n.edit-\(step) { background: url(\(image)); }\n")
            return "stylesheet \(sheet)"
        case "policy":
            guard let policy = files("policies", "policy.json").first,
                var object = try JSONSerialization.jsonObject(with: Data(TestSupport.read(root + "/" + policy))) as? [String: Any],
                let key = object.keys.sorted().randomElement(using: &random),
                var entry = object[key] as? [String: Any]
            else { return "none" }
            entry["display_name"] = "Renamed at step \(step)"
            object[key] = entry
            try TestSupport.writeBytes(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])), to: root + "/" + policy)
            return "policy \(key)"
        case "add-block":
            guard let unit = files("vertical", ".xml").randomElement(using: &random) else { return "none" }
            let name = "added_\(step)"
            try write("html/\(name).xml", "<html filename=\"\(name)\" display_name=\"Added \(step)\"/>")
            try write("html/\(name).html", "<p>Added at step \(step).</p>")
            try write(unit, text(unit).replacingOccurrences(of: "</vertical>", with: "  <html url_name=\"\(name)\"/>\n</vertical>"))
            return "add-block \(name) to \(unit)"
        case "remove-block":
            let units = files("vertical", ".xml").filter { text($0).contains("<html url_name=") }
            guard let unit = units.randomElement(using: &random) else { return "none" }
            let content = text(unit)
            guard let start = content.range(of: "<html url_name="), let end = content[start.upperBound...].range(of: "/>") else { return "none" }
            try write(unit, String(content[..<start.lowerBound]) + String(content[end.upperBound...]))
            return "remove-block from \(unit)"
        case "same-size-html":
            // Right after a build, within its clock tick: one letter of a page's text changed, the
            // size and the modification time kept. Only the bytes (and ctime) say it changed.
            guard let page = files("html", ".html").randomElement(using: &random) else { return "none" }
            let path = root + "/" + page
            var bytes = TestSupport.read(path)
            let letters = bytes.indices.filter { bytes[$0] >= UInt8(ascii: "a") && bytes[$0] <= UInt8(ascii: "y") }
            guard let index = letters.randomElement(using: &random) else { return "none" }
            var info = stat()
            stat(path, &info)
            bytes[index] += 1
            try TestSupport.writeBytes(bytes, to: path)
            var times = [info.st_atim, info.st_mtim]
            utimensat(AT_FDCWD, path, &times, 0)
            return "same-size-html \(page) byte \(index)"
        case "script":
            guard let script = files("static", ".js").randomElement(using: &random) else { return "none" }
            try write(script, text(script) + "\n// Edit \(step).\n")
            return "script \(script)"
        case "move-block":
            // Course structure: a component leaves its unit for another one.
            let units = files("vertical", ".xml")
            guard let from = units.filter({ text($0).contains("<html url_name=") }).randomElement(using: &random),
                let to = units.filter({ $0 != from && text($0).contains("</vertical>") }).randomElement(using: &random)
            else { return "none" }
            let content = text(from)
            guard let start = content.range(of: "<html url_name="), let end = content[start.upperBound...].range(of: "/>") else { return "none" }
            let child = String(content[start.lowerBound..<end.upperBound])
            try write(from, String(content[..<start.lowerBound]) + String(content[end.upperBound...]))
            try write(to, text(to).replacingOccurrences(of: "</vertical>", with: "  \(child)\n</vertical>"))
            return "move-block \(child) from \(from) to \(to)"
        case "template":
            // The page shell or the page stylesheet, as an operator's --templates folder changes.
            if Bool.random(using: &random) {
                let path = templates + "/coursepack.css"
                try TestSupport.writeBytes(TestSupport.read(path) + Array("\n.edit-\(step) { color: #123; }\n".utf8), to: path)
                return "template coursepack.css"
            }
            let path = templates + "/page.mustache"
            let shell = String(decoding: TestSupport.read(path), as: UTF8.self)
            try TestSupport.writeBytes(Array(shell.replacingOccurrences(of: "</main>", with: "</main>\n<!-- edit \(step) -->").utf8), to: path)
            return "template page.mustache"
        default:
            guard let page = files("html", ".html").randomElement(using: &random) else { return "none" }
            let name = "new-file-\(step).txt"
            try write("static/" + name, "New file \(step)")
            try write(page, text(page) + "\n<a href=\"/static/\(name)\">new file</a>\n")
            return "new-static \(name) linked from \(page)"
        }
    }
}
