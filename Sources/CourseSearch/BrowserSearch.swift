/// The outline page's search: a form, a results list, and a script that ranks the documents
/// of `window.coursepackSearchIndex` (loaded by a script element from the installed
/// `search/<hash>/index.js`, so it works from `file://`) with the rules of `SearchTokenizer`,
/// `SearchQuery` and `SearchRanking`, ported line for line: a change to one is a change to both.
public enum BrowserSearch {
    /// The HTML to put in the outline page's body. `indexScript`: the index file's path relative
    /// to the page; `installed`: usage ids whose page is on this device.
    public static func section(indexScript: String, installed: [String]) -> String {
        let ids = installed.map { "\"" + jsonEscaped($0) + "\"" }.joined(separator: ",")
        return """
            <form id="coursepack-search" role="search" onsubmit="return false">
            <label for="coursepack-search-query">Search this course</label>
            <input type="search" id="coursepack-search-query" name="q" autocomplete="off">
            <button type="submit" id="coursepack-search-button">Search</button>
            </form>
            <p id="coursepack-search-status" role="status"></p>
            <ol id="coursepack-search-results"></ol>
            <script src="\(indexScript)" id="coursepack-search-index"></script>
            <script>window.coursepackInstalled = [\(ids)];</script>
            <script>
            \(script)</script>

            """
    }

    static func jsonEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "<": out += "\\u003c"
            default:
                if scalar.value < 0x20 { out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    static let stopWords = StopWords.english.sorted().map { "\"\($0)\"" }.joined(separator: ",")

    public static let script = """
        (function () {
          "use strict";
          // Format 2 keeps the documents in part files beside index.js: load them in order
          // (script elements, which file:// allows), then start.
          var loading = window.coursepackSearchIndex, parts = (loading && loading.parts) || [];
          var note = document.getElementById("coursepack-search-status");
          if (!parts.length) { start(); return; }
          var element = document.getElementById("coursepack-search-index");
          var src = element ? element.getAttribute("src") : "";
          var folder = src.slice(0, src.lastIndexOf("/") + 1), remaining = parts.length, failed = false;
          window.coursepackSearchParts = [];
          if (note) note.textContent = "Loading the search index…";
          parts.forEach(function (name) {
            var part = document.createElement("script");
            part.async = false;
            part.src = folder + name;
            part.onload = function () {
              remaining -= 1;
              if (remaining > 0 || failed) return;
              window.coursepackSearchParts.forEach(function (p) { loading.documents = loading.documents.concat(p.documents); });
              if (note) note.textContent = "";
              start();
            };
            part.onerror = function () {
              failed = true;
              if (note) note.textContent = "The search index on this device is damaged: run coursepack sync to repair it.";
            };
            document.body.appendChild(part);
          });
        function start() {
          var index = window.coursepackSearchIndex;
          var form = document.getElementById("coursepack-search");
          var input = document.getElementById("coursepack-search-query");
          var status = document.getElementById("coursepack-search-status");
          var list = document.getElementById("coursepack-search-results");
          if (!index || !form) { if (status) status.textContent = "The search index is not on this device."; return; }
          var installed = {};
          (window.coursepackInstalled || []).forEach(function (id) { installed[id] = true; });
          var primary = String(index.language || "").split("-")[0].toLowerCase();
          var stop = {};
          if (primary === "" || primary === "en") [\(stopWords)].forEach(function (w) { stop[w] = true; });
          var mark = /[\\p{Mn}\\p{Me}]/u, word = /[\\p{L}\\p{N}\\p{Mc}]/u;
          function ideographic(c) {
            return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0xFF66 && c <= 0xFF9D) ||
              (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
              (c >= 0x20000 && c <= 0x3FFFF) || (c >= 0xAC00 && c <= 0xD7A3);
          }
          function fold(ch) { return Array.from(ch.normalize("NFKD").toLowerCase()).filter(function (c) { return !mark.test(c); }); }
          // SearchTokenizer.allTokens: [term, start, end] in UTF-16 offsets.
          function allTokens(text) {
            var out = [], cur = "", start = -1, end = 0;
            function flush() { if (start >= 0 && cur) out.push([cur, start, end]); cur = ""; start = -1; }
            for (var i = 0; i < text.length;) {
              var cp = text.codePointAt(i), next = i + (cp > 0xFFFF ? 2 : 1), ch = String.fromCodePoint(cp);
              if (cp < 0x80) {
                if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x61 && cp <= 0x7A) || (cp >= 0x41 && cp <= 0x5A)) {
                  if (start < 0) start = i;
                  cur += ch.toLowerCase(); end = next;
                } else flush();
              } else if (ideographic(cp)) {
                flush();
                var t = (cp >= 0xAC00 && cp <= 0xD7A3) ? ch : fold(ch).filter(function (c) { return word.test(c); }).join("");
                if (t) out.push([t, i, next]);
              } else {
                var separated = false;
                fold(ch).forEach(function (c) {
                  if (word.test(c)) {
                    if (separated) { flush(); separated = false; }
                    if (start < 0) start = i;
                    cur += c; end = next;
                  } else separated = true;
                });
                if (separated) flush();
              }
              i = next;
            }
            flush();
            return out;
          }
          function tokens(text) { return allTokens(text).filter(function (t) { return !stop[t[0]]; }); }
          // For tests and host apps: the terms of a text, as the index holds them.
          window.coursepackSearchTerms = function (text) { return tokens(text).map(function (t) { return t[0]; }); };
          // SearchQuery: words alone, or a quoted phrase.
          function parse(text) {
            var phrases = [], seen = {};
            text.split("\\"").forEach(function (piece, n) {
              var terms = tokens(piece).map(function (t) { return t[0]; });
              var found = n % 2 === 1 ? (terms.length ? [terms] : []) : terms.map(function (t) { return [t]; });
              found.forEach(function (p) { var key = p.join(" "); if (!seen[key]) { seen[key] = true; phrases.push(p); } });
            });
            return phrases;
          }
          var weights = [\(SearchRanking.titleWeight), \(SearchRanking.pathWeight), \(SearchRanking.bodyWeight)], k1 = \(SearchRanking.k1), b = \(SearchRanking.b);
          var docs = index.documents.map(function (d) {
            var fields = [d.title_terms, d.path_terms, d.body_terms].map(function (f) { return f ? f.split(" ") : []; });
            return { d: d, fields: fields, length: fields[0].length + fields[1].length + fields[2].length };
          });
          var total = 0;
          docs.forEach(function (x) { total += x.length; });
          var average = docs.length ? total / docs.length : 1;
          // Weighted occurrences of a phrase in a document (0: absent), as FTS5 counts them.
          function frequency(x, phrase) {
            var f = 0;
            x.fields.forEach(function (terms, column) {
              for (var i = 0; i + phrase.length <= terms.length; i++) {
                var all = true;
                for (var j = 0; j < phrase.length; j++) if (terms[i + j] !== phrase[j]) { all = false; break; }
                if (all) f += weights[column];
              }
            });
            return f;
          }
          function search(text) {
            var phrases = parse(text);
            if (!phrases.length) return null;
            var freqs = docs.map(function (x) { return phrases.map(function (p) { return frequency(x, p); }); });
            var idf = phrases.map(function (p, i) {
              var hits = 0;
              freqs.forEach(function (f) { if (f[i] > 0) hits++; });
              var v = Math.log((docs.length - hits + 0.5) / (hits + 0.5));
              return v > 0 ? v : 1e-6;
            });
            var results = [];
            docs.forEach(function (x, n) {
              var f = freqs[n];
              if (f.some(function (v) { return v === 0; })) return;
              var score = 0;
              phrases.forEach(function (p, i) {
                score += idf[i] * (f[i] * (k1 + 1)) / (f[i] + k1 * (1 - b + b * x.length / average));
              });
              results.push({ x: x, score: score, n: n });
            });
            results.sort(function (p, q) { return q.score - p.score || p.n - q.n; });
            return { phrases: phrases, results: results };
          }
          function snippet(text, terms) {
            var hit = tokens(text).filter(function (t) { return terms[t[0]]; })[0];
            var from = hit ? Math.max(0, hit[1] - 53) : 0;
            if (from > 0) { var space = text.indexOf(" ", from); if (space >= 0 && space < hit[1]) from = space + 1; }
            var piece = text.slice(from, from + 160);
            if (from + 160 < text.length && piece.lastIndexOf(" ") > 0) piece = piece.slice(0, piece.lastIndexOf(" ")) + " …";
            return (from > 0 ? "… " : "") + piece;
          }
          function show() {
            var found = search(input.value);
            list.textContent = "";
            if (!found) { status.textContent = input.value.trim() ? "Only very common words: add a word that says what to find." : ""; return; }
            status.textContent = found.results.length + (found.results.length === 1 ? " result" : " results");
            var terms = {};
            found.phrases.forEach(function (p) { p.forEach(function (t) { terms[t] = true; }); });
            found.results.slice(0, 50).forEach(function (r) {
              var d = r.x.d, item = document.createElement("li"), title;
              if (d.page && installed[d.usage_id]) {
                title = document.createElement("a");
                title.href = d.page.split("/").map(encodeURIComponent).join("/");
              } else {
                title = document.createElement("span");
                title.className = d.page ? "missing" : "online";
              }
              title.textContent = d.title || d.type;
              item.appendChild(title);
              // Worded as the outline marks blocks, without repeating its exact marks in this script.
              if (!(d.page && installed[d.usage_id])) item.appendChild(document.createTextNode(" (" + (d.page ? "not on this device" : "online only") + ")"));
              var where = document.createElement("div");
              where.className = "path";
              where.textContent = d.path.join(" › ");
              item.appendChild(where);
              if (d.text) {
                var excerpt = document.createElement("div");
                excerpt.className = "snippet";
                excerpt.textContent = snippet(d.text, terms);
                item.appendChild(excerpt);
              }
              list.appendChild(item);
            });
          }
          form.addEventListener("submit", function (event) { event.preventDefault(); show(); });
          input.addEventListener("input", show);
        }
        })();

        """
}
