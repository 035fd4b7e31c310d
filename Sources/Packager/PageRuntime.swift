import FileSystem
import BlockRenderer
import Crypto
import Foundation
import Manifest
import ZipArchive

/// The shared runtime archive: what the LMS gives course HTML (jQuery, math rendering), taken at
/// build time from the system's JavaScript packages and published once per course beside the
/// block archives, so each page stays small and a client downloads the libraries once.
///
/// Math is KaTeX, not the LMS's MathJax: Debian's KaTeX with the fonts a browser uses (WOFF2) is
/// under 1 MB where MathJax 2.7 is 54 MB, and KaTeX renders synchronously without a loader that
/// fetches further files at read time. It reads the same TeX delimiters.
struct PageRuntime: Sendable {
    static let requiredPackages = "libjs-jquery libjs-katex"

    /// Archive-relative name and bytes, sorted by name.
    let files: [(name: String, bytes: [UInt8])]
    let contentHash: String

    var name: String { String(contentHash.prefix(16)) }
    var archivePath: String { SharedArchive.Kind.runtime.archivePath(contentHash: contentHash) }

    /// Reads the runtime from `source`; nil, with the files it could not find, when the packages
    /// are not installed.
    static func load(from source: String) -> (PageRuntime?, missing: [String]) {
        var files: [(String, [UInt8])] = [("coursepack-math.js", Array(mathGlue.utf8))]
        var missing: [String] = []
        func add(_ name: String, from relative: String) {
            guard let data = FileManager.default.contents(atPath: source + "/" + relative) else {
                missing.append(source + "/" + relative)
                return
            }
            files.append((name, Array(data)))
        }
        add("jquery.min.js", from: "jquery/jquery.min.js")
        add("katex/katex.min.js", from: "katex/katex.min.js")
        add("katex/katex.min.css", from: "katex/katex.min.css")
        add("katex/contrib/auto-render.js", from: "katex/contrib/auto-render.js")
        // Every browser that runs KaTeX reads WOFF2 and takes the first format its stylesheet
        // lists that it supports, so the WOFF and TTF copies would never be fetched.
        let fonts = ((try? FileManager.default.contentsOfDirectory(atPath: source + "/katex/fonts")) ?? []).filter { $0.hasSuffix(".woff2") }.sorted()
        if fonts.isEmpty { missing.append(source + "/katex/fonts/*.woff2") }
        for font in fonts { add("katex/fonts/" + font, from: "katex/fonts/" + font) }
        guard missing.isEmpty else { return (nil, missing) }
        files.sort { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
        var hasher = SHA256()
        hasher.update(data: Array("coursepack-runtime-v1\n".utf8))
        for (name, bytes) in files {
            hasher.update(data: Array("\(name)\n\(SHA256Hex.of(bytes))\n".utf8))
        }
        return (PageRuntime(files: files, contentHash: SHA256Hex.hex(hasher.finalize())), [])
    }

    /// Sizes and times of the files `load` reads, so an unchanged build notices a package update
    /// without reading them.
    static func stamp(of source: String) -> String {
        let names = ["jquery/jquery.min.js", "katex/katex.min.js", "katex/katex.min.css", "katex/contrib/auto-render.js", "katex/fonts"]
        return names.map { name in FileStamp.of(source + "/" + name).map { "\($0.size)/\($0.modified)" } ?? "-" }.joined(separator: ",")
    }

    /// The elements a page at `<type>/<name>/index.html` needs for `libraries`.
    func elements(for libraries: Set<RuntimeLibrary>) -> [UInt8] {
        let base = "../../runtime/\(name)/"
        var html = ""
        for library in libraries.sorted() {
            switch library {
            case .jquery:
                html += "<script src=\"\(base)jquery.min.js\"></script>\n"
            case .math:
                html += "<link rel=\"stylesheet\" href=\"\(base)katex/katex.min.css\">\n"
                html += "<script src=\"\(base)katex/katex.min.js\"></script>\n"
                html += "<script src=\"\(base)katex/contrib/auto-render.js\"></script>\n"
                html += "<script src=\"\(base)coursepack-math.js\"></script>\n"
            }
        }
        return Array(html.utf8)
    }

    /// What the device keeps once: one archive of all the files.
    var shared: SharedContent {
        SharedContent(
            kind: .runtime, contentHash: contentHash,
            files: files.map { SharedContent.File(name: $0.name, sha256: SHA256Hex.of($0.bytes), content: .bytes($0.bytes)) })
    }

    /// Renders TeX the way the LMS's MathJax configuration reads it on every page, HTML blocks
    /// included: `\(…\)` and `[mathjaxinline]…[/mathjaxinline]` inline, `\[…\]`, `$$…$$` and
    /// `[mathjax]…[/mathjax]` displayed, and `<script type="math/tex">` elements.
    static let mathGlue = #"""
        (function () {
          function render() {
            if (typeof katex === "undefined" || typeof renderMathInElement !== "function") return;
            Array.prototype.forEach.call(document.querySelectorAll('script[type^="math/tex"]'), function (script) {
              var display = script.type.indexOf("mode=display") >= 0;
              var target = document.createElement(display ? "div" : "span");
              katex.render(script.textContent, target, { displayMode: display, throwOnError: false });
              script.parentNode.replaceChild(target, script);
            });
            renderMathInElement(document.body, {
              delimiters: [
                { left: "$$", right: "$$", display: true },
                { left: "\\[", right: "\\]", display: true },
                { left: "\\(", right: "\\)", display: false },
                { left: "[mathjax]", right: "[/mathjax]", display: true },
                { left: "[mathjaxinline]", right: "[/mathjaxinline]", display: false }
              ],
              ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option"],
              throwOnError: false
            });
          }
          if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render);
          else render();
        })();

        """#
}
