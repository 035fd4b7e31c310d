import Foundation
import TestSupport

/// Random edits of an OLX export, of every kind a course team makes.
public struct CourseEditor {
    public let root: String
    public let templates: String
    public private(set) var kinds = Set<String>()

    public static let allKinds = [
        "html", "static", "script", "stylesheet", "policy", "add-block", "remove-block", "move-block", "new-static", "template", "same-size-html",
        "problem-page", "link-block",
    ]

    public init(root: String, templates: String) {
        self.root = root
        self.templates = templates
    }

    func files(_ folder: String, _ suffix: String) -> [String] {
        TestSupport.files(under: root + "/" + folder).filter { $0.hasSuffix(suffix) }.map { folder + "/" + $0 }.sorted()
    }

    func text(_ path: String) -> String { String(decoding: TestSupport.read(root + "/" + path), as: UTF8.self) }

    func write(_ path: String, _ text: String) throws { try TestSupport.write([path: text], under: root) }

    public mutating func apply(_ step: Int, using random: inout SeededGenerator) throws -> String {
        guard let kind = Self.allKinds.randomElement(using: &random) else { return "none" }
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
        case "link-block":
            // A link to another block by jump_to_id or by its bare url_name, to one that exists
            // or to one a later add-block makes: a page depends on where its links land.
            guard let page = files("html", ".html").randomElement(using: &random) else { return "none" }
            let names = files("html", ".xml").map { String($0.dropFirst("html/".count).dropLast(".xml".count)) }
                + ["added_\(step + 1)", "added_\(step + 2)"]
            guard let name = names.randomElement(using: &random) else { return "none" }
            let href = Bool.random(using: &random) ? "/jump_to_id/" + name : name
            try write(page, text(page) + "\n<p><a href=\"\(href)\">See \(name)</a></p>\n")
            return "link-block \(page) to \(href)"
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
        case "problem-page":
            // A problem that gains a response only the server can grade loses its page (links
            // to it then point online), and gets it back when the response goes again.
            let marker = "<coderesponse queuename=\"edit\"/>"
            guard let problem = files("problem", ".xml").filter({ text($0).contains("</problem>") }).randomElement(using: &random) else { return "none" }
            let content = text(problem)
            // A page that links to it, which must follow.
            let name = String(problem.dropFirst("problem/".count).dropLast(".xml".count))
            if let page = files("html", ".html").randomElement(using: &random) {
                try write(page, text(page) + "\n<a href=\"/jump_to_id/\(name)\">problem</a>\n")
            }
            if content.contains(marker) {
                try write(problem, content.replacingOccurrences(of: marker, with: ""))
                return "problem-page \(problem) back offline"
            }
            try write(problem, content.replacingOccurrences(of: "</problem>", with: marker + "</problem>"))
            return "problem-page \(problem) online only"
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
