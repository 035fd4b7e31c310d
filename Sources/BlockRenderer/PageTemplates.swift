import FileSystem
import Foundation
import Mustache

/// The page shell and stylesheet every block page is built from: the defaults compiled into the
/// binary, each replaceable by a file of the same name in an operator's `--templates` folder.
public struct PageTemplates: Sendable {
    public static let shellName = "page.mustache"
    public static let stylesheetName = "coursepack.css"

    let shell: MustacheTemplate
    public let stylesheet: String
    /// Changes whenever any template text changes, so pages built with other templates count as changed.
    public let fingerprint: String

    /// The templates compiled into the binary, by file name.
    public static var defaultFiles: [String: String] { DefaultTemplates.files }

    public static func defaults() -> PageTemplates {
        // The embedded defaults are checked by tests; they always parse.
        try! PageTemplates(files: DefaultTemplates.files)
    }

    /// Defaults overridden by the files found in `folder`.
    public static func overriding(with folder: String) throws(RenderError) -> PageTemplates {
        var files = DefaultTemplates.files
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw .template(path: folder, reason: "cannot list the folder")
        }
        for name in names where DefaultTemplates.files[name] != nil {
            let path = folder + "/" + name
            guard let data = WholeFile.readIfUsable(path, atMost: 16 << 20), let text = String(validating: data, as: UTF8.self) else {
                throw .template(path: path, reason: "cannot be read as UTF-8 text (a regular file of at most 16 MiB)")
            }
            files[name] = text
        }
        let shellPath = names.contains(Self.shellName) ? folder + "/" + Self.shellName : Self.shellName
        return try PageTemplates(files: files, shellPath: shellPath)
    }

    init(files: [String: String], shellPath: String = PageTemplates.shellName) throws(RenderError) {
        let shellText = files[Self.shellName] ?? ""
        do {
            shell = try MustacheTemplate(string: shellText)
        } catch {
            throw .template(path: shellPath, reason: "\(error)")
        }
        // The block goes in exactly one place: a second copy would double every page, and the
        // page must not depend on anything but the course and the templates.
        let uses = Self.contentTags(in: shellText)
        guard uses.escaped == 0 else {
            throw .template(path: shellPath, reason: "{{content}} would escape the block's HTML; write {{{content}}}")
        }
        guard uses.unescaped == 1 else {
            throw .template(path: shellPath, reason: uses.unescaped == 0
                ? "must contain {{{content}}} where the block goes"
                : "contains {{{content}}} \(uses.unescaped) times; it must appear exactly once")
        }
        guard !shellText.unicodeScalars.contains(Self.markerDelimiter) else {
            throw .template(path: shellPath, reason: "contains the control character U+0001")
        }
        stylesheet = files[Self.stylesheetName] ?? ""
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for name in files.keys.sorted() {
            for byte in (name + "\u{0}" + (files[name] ?? "") + "\u{0}").utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        fingerprint = String(hash, radix: 16)
    }

    /// How many tags of `text` put the content in the page unescaped (`{{{content}}}`,
    /// `{{& content}}`) and escaped (`{{content}}`), with any spacing inside the braces.
    static func contentTags(in text: String) -> (unescaped: Int, escaped: Int) {
        func count(_ pattern: String) -> Int {
            guard let expression = try? NSRegularExpression(pattern: pattern) else { return 0 }
            return expression.numberOfMatches(in: text, range: NSRange(text.startIndex..., in: text))
        }
        let unescaped = count(#"\{\{\{\s*content\s*\}\}\}|\{\{\s*&\s*content\s*\}\}"#)
        // `{{{content}}}` also holds `{{content}}`; only a `{{` not followed by a third brace is escaped.
        let escaped = count(#"(?<!\{)\{\{(?!\{)\s*content\s*\}\}(?!\})"#)
        return (unescaped, escaped)
    }

    static let markerDelimiter: Unicode.Scalar = "\u{1}"
    /// Stands for the content while the shell renders. Fixed, so the same course always gives
    /// the same page; no field can forge it, since fields lose U+0001 first and the shell may
    /// not contain it.
    static let marker = "\u{1}coursepack-content\u{1}"

    /// The shell around `content`, whose bytes are spliced in untouched (they may not be UTF-8).
    func page(_ fields: [String: String], content: [UInt8]) -> [UInt8] {
        var values = fields.mapValues { $0.replacingOccurrences(of: String(Self.markerDelimiter), with: "") }
        values["content"] = Self.marker
        let rendered = Array(shell.render(values).utf8)
        let needle = Array(Self.marker.utf8)
        // A shell that hides its one content tag in a section left unrendered: the block still goes in.
        guard let start = rendered.indices.first(where: { rendered[$0...].starts(with: needle) }) else { return rendered + content }
        return Array(rendered[..<start]) + content + Array(rendered[(start + needle.count)...])
    }

    /// Inserts elements at the end of the page's `<head>` (at its start when the page has no head).
    public static func insertIntoHead(_ elements: [UInt8], page: [UInt8]) -> [UInt8] {
        guard !elements.isEmpty else { return page }
        let at = ByteSearch.firstCaseInsensitive(page, "</head", from: 0) ?? 0
        return Array(page[..<at]) + elements + Array(page[at...])
    }

    /// Inserts elements before the page's first script, or at the end of its head: where a library
    /// must be for every course script to find it.
    public static func insertBeforeScripts(_ elements: [UInt8], page: [UInt8]) -> [UInt8] {
        guard !elements.isEmpty else { return page }
        let head = ByteSearch.firstCaseInsensitive(page, "</head", from: 0)
        let script = ByteSearch.firstCaseInsensitive(page, "<script", from: 0)
        let at = [head, script].compactMap { $0 }.min() ?? 0
        return Array(page[..<at]) + elements + Array(page[at...])
    }

    /// Inserts elements just before the page's last `</body>` (at its end when it has none).
    public static func insertBeforeBodyEnd(_ elements: [UInt8], page: [UInt8]) -> [UInt8] {
        var at: Int?
        var from = 0
        while let found = ByteSearch.firstCaseInsensitive(page, "</body", from: from) {
            at = found
            from = found + 1
        }
        guard let at else { return page + elements }
        return Array(page[..<at]) + elements + Array(page[at...])
    }
}
