import BlockRenderer
import CourseExport
import FileSystem
import Foundation

/// Course files that scripts load by name (`d3.json('course_layout.json')`,
/// `fetch("/static/data.csv")`, `$.getJSON(…)`). A browser allows no fetch or XHR from a page
/// opened from file://, so such a page would stop where it loads its data. The files a page's
/// scripts name travel inside a generated script, `coursepack-files.js`, that answers those
/// requests from the copy it carries, from file:// and under `serve` alike.
struct ScriptLoadedFiles: Sendable {
    /// What scripts read as data. Scripts, stylesheets and pages are bundled as such; media
    /// is loaded through elements, which work from file://.
    static let dataExtensions: Set<String> = ["json", "geojson", "topojson", "csv", "tsv", "txt", "xml", "dsv", "yaml", "yml", "md", "svg"]
    /// A page carries each file twice (its generated script and, when referenced as a path,
    /// its static folder), so only small data travels inside the page.
    static let fileLimit = 2 << 20
    static let pageLimit = 8 << 20
    /// The generated script's name, beside the page's index.html.
    static let scriptName = "coursepack-files.js"

    /// Static path (under static/) → the names scripts use for it.
    private(set) var names: [String: Set<String>] = [:]

    var isEmpty: Bool { names.isEmpty }

    mutating func formUnion(_ other: ScriptLoadedFiles) {
        names.merge(other.names) { $0.union($1) }
    }

    /// Adds the files that a script's quoted strings name. `folder` is the script's own folder
    /// under static/ ("" for an inline script or one at the top), tried after static/ itself.
    mutating func add(namedIn script: ArraySlice<UInt8>, folder: String, export: ExportDirectory) {
        for literal in Self.quotedStrings(in: script) {
            guard let name = Self.courseFileName(literal) else { continue }
            let candidates = folder.isEmpty ? [name] : [name, folder + "/" + name]
            guard let path = candidates.first(where: { (try? export.regularFile("static/" + $0)) != nil }) else { continue }
            names[path, default: []].formUnion([name, path])
        }
    }

    /// The inline scripts of a page.
    mutating func add(inlineScriptsOf page: [UInt8], export: ExportDirectory) {
        var from = 0
        while let open = ByteSearch.firstCaseInsensitive(page, "<script", from: from),
            let bodyStart = page[open...].firstIndex(of: UInt8(ascii: ">")).map({ $0 + 1 })
        {
            let end = ByteSearch.firstCaseInsensitive(page, "</script", from: bodyStart) ?? page.count
            add(namedIn: page[bodyStart..<end], folder: "", export: export)
            from = end
        }
    }

    /// The name a string literal gives a course file: no scheme, no host, no `..`, a data
    /// extension; `/static/` and `./` are dropped, as are a query and a fragment.
    static func courseFileName(_ literal: String) -> String? {
        var name = literal
        if let cut = name.firstIndex(where: { $0 == "?" || $0 == "#" }) { name = String(name[..<cut]) }
        for prefix in ["/static/", "static/", "./"] where name.hasPrefix(prefix) {
            name = String(name.dropFirst(prefix.count))
        }
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains(":"), !name.contains("\\"),
            !name.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }),
            let dot = name.lastIndex(of: "."), dataExtensions.contains(name[name.index(after: dot)...].lowercased())
        else { return nil }
        return name.removingPercentEncoding ?? name
    }

    /// Single-, double- and back-quoted strings on one line, without `${…}`, up to 300 bytes.
    static func quotedStrings(in script: ArraySlice<UInt8>) -> [String] {
        var found: [String] = []
        var i = script.startIndex
        while i < script.endIndex {
            let quote = script[i]
            guard quote == UInt8(ascii: "'") || quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "`") else {
                i += 1
                continue
            }
            var j = i + 1
            while j < script.endIndex, j - i <= 300, script[j] != quote, script[j] != UInt8(ascii: "\n") {
                j += script[j] == UInt8(ascii: "\\") ? 2 : 1
            }
            guard j < script.endIndex, script[j] == quote else {
                i += 1
                continue
            }
            if let text = String(validating: script[(i + 1)..<j], as: UTF8.self), !text.contains("${") { found.append(text) }
            i = j + 1
        }
        return found
    }

    /// The generated script, with each file's bytes (nil when there is nothing to carry), and
    /// the files over the limits, left out for the build to report. A file's size is checked
    /// before it is read: 16 pages naming 50 files of 60 MiB each once read 48 GiB to carry none.
    func script(export: ExportDirectory) -> (bytes: [UInt8]?, tooLarge: [String]) {
        var carried: [String: Any] = [:]
        var tooLarge: [String] = []
        var total = 0
        for path in names.keys.sorted() {
            let staticFile = "static/" + path
            guard let size = FileStamp.of(export.path(staticFile))?.size, size <= UInt64(Self.fileLimit), total + Int(size) <= Self.pageLimit,
                let bytes = try? export.read(staticFile), bytes.count <= Self.fileLimit, total + bytes.count <= Self.pageLimit
            else {
                tooLarge.append(path)
                continue
            }
            total += bytes.count
            var file: [String: String] = ["type": Self.mediaType(of: path)]
            if let text = String(validating: bytes, as: UTF8.self) { file["text"] = text } else { file["base64"] = Data(bytes).base64EncodedString() }
            for name in names[path] ?? [] { carried[name] = file }
        }
        guard !carried.isEmpty,
            let json = try? JSONSerialization.data(withJSONObject: carried, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return (nil, tooLarge) }
        let text = Self.shim.replacingOccurrences(of: "__FILES__", with: String(decoding: json, as: UTF8.self))
        return (Array(text.utf8), tooLarge)
    }

    static func mediaType(of path: String) -> String {
        switch path.split(separator: ".").last?.lowercased() ?? "" {
        case "json", "geojson", "topojson": return "application/json"
        case "csv": return "text/csv"
        case "tsv": return "text/tab-separated-values"
        case "xml": return "application/xml"
        case "svg": return "image/svg+xml"
        case "yaml", "yml": return "application/yaml"
        case "md": return "text/markdown"
        default: return "text/plain"
        }
    }

    /// Answers `fetch` and `XMLHttpRequest` GETs of a carried file, same origin only, by the
    /// end of the request's path; every other request goes on as the page made it.
    static let shim = #"""
        // Made by coursepack: course files this page's scripts load, answered from this copy,
        // since a page opened from file:// may not fetch them.
        (function () {
          "use strict";
          var files = __FILES__;
          var names = Object.keys(files).sort(function (a, b) { return b.length - a.length; });
          function find(url) {
            var u;
            try { u = new URL(String(url), document.baseURI); } catch (e) { return null; }
            if (u.protocol !== location.protocol || u.host !== location.host) return null;
            var path;
            try { path = decodeURIComponent(u.pathname); } catch (e) { path = u.pathname; }
            for (var i = 0; i < names.length; i++) {
              var name = names[i];
              if (path === name || path.slice(-name.length - 1) === "/" + name) return files[name];
            }
            return null;
          }
          function bytes(file) {
            if (file.text !== undefined) return new TextEncoder().encode(file.text);
            var raw = atob(file.base64), out = new Uint8Array(raw.length);
            for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
            return out;
          }
          function text(file) { return file.text !== undefined ? file.text : new TextDecoder().decode(bytes(file)); }
          if (typeof window.fetch === "function") {
            var fetchOnline = window.fetch;
            window.fetch = function (input, init) {
              var method = (init && init.method) || (input && input.method) || "GET";
              var file = String(method).toUpperCase() === "GET" ? find(input && input.url ? input.url : input) : null;
              if (!file) return fetchOnline.apply(this, arguments);
              return Promise.resolve(new Response(bytes(file), { status: 200, statusText: "OK", headers: { "Content-Type": file.type } }));
            };
          }
          var proto = XMLHttpRequest.prototype, open = proto.open, send = proto.send;
          proto.open = function (method, url) {
            this.coursepackFile = String(method).toUpperCase() === "GET" ? find(url) : null;
            this.coursepackURL = url;
            return open.apply(this, arguments);
          };
          proto.send = function () {
            var file = this.coursepackFile;
            if (!file) return send.apply(this, arguments);
            var xhr = this, kind = xhr.responseType || "text", body = text(file), xml = null;
            if (kind === "json") { try { body = JSON.parse(body); } catch (e) { body = null; } }
            else if (kind === "arraybuffer") body = bytes(file).buffer;
            else if (kind === "blob") body = new Blob([bytes(file)], { type: file.type });
            if (kind === "document" || (kind === "text" && /xml/.test(file.type))) {
              xml = new DOMParser().parseFromString(text(file), /xml/.test(file.type) ? file.type : "text/html");
              if (kind === "document") body = xml;
            }
            function define(name, value) { Object.defineProperty(xhr, name, { configurable: true, get: function () { return value; } }); }
            define("readyState", 4);
            define("status", 200);
            define("statusText", "OK");
            define("response", body);
            define("responseURL", new URL(String(xhr.coursepackURL), document.baseURI).href);
            if (kind === "text") define("responseText", body);
            define("responseXML", xml);
            xhr.getResponseHeader = function (name) { return String(name).toLowerCase() === "content-type" ? file.type : null; };
            xhr.getAllResponseHeaders = function () { return "content-type: " + file.type + "\r\n"; };
            setTimeout(function () {
              ["readystatechange", "load", "loadend"].forEach(function (name) { xhr.dispatchEvent(new ProgressEvent(name)); });
            }, 0);
          };
        })();

        """#
}
