import CourseExport
import FileSystem
import Foundation
import LinkRewriter

/// Renders a video block: a local file plays in `<video>` with WebVTT tracks; a YouTube or
/// externally hosted video keeps its transcripts as readable text and a link to watch online.
struct VideoRenderer {
    /// Source bytes of transcripts one video page carries; the rest stay online.
    static let transcriptBytesLimit = 8 << 20

    static let videoExtensions: Set<String> = ["mp4", "m4v", "webm", "ogv", "mov"]

    let block: Block
    let course: Course
    let export: ExportDirectory

    struct Output {
        var html: String
        var files: [String: [UInt8]]
        var requiresNetwork: [String]
    }

    enum Outcome {
        case page(Output)
        case onlineOnly(String)
    }

    func render() -> Outcome {
        let sources = self.sources()
        let local = sources.first { isLocal($0) } ?? sources.lazy.compactMap { localCopy(of: $0) }.first
        let external = sources.filter { !isLocal($0) } + encodedVideoURLs()
        var requiresNetwork: [String] = []
        if let id = youtubeID() { requiresNetwork.append("https://www.youtube.com/watch?v=\(id)") }
        var seen = Set(requiresNetwork)
        requiresNetwork += external.filter { seen.insert($0).inserted }

        var tracks: [(language: String, transcript: Transcript)] = []
        // Each file read and parsed once, and a page carries transcripts up to a bound: 200
        // languages naming one 500 KB file once made a 214 MB page and took 1.7 GB.
        var parsed: [String: Transcript?] = [:]
        var carried = 0
        var leftOnline = 0
        for (language, name) in transcriptFiles() {
            guard let path = course.staticFiles.resolve(name) else { continue }
            let staticPath = "static/" + path
            guard let size = FileStamp.of(export.path(staticPath))?.size else { continue }
            guard carried + Int(clamping: size) <= Self.transcriptBytesLimit else {
                leftOnline += 1
                continue
            }
            if parsed[path] == nil {
                let bytes = try? export.read(staticPath)
                parsed[path] = bytes.flatMap { name.lowercased().hasSuffix(".sjson") ? Transcript.parseSJSON($0) : Transcript.parseSRT($0) }
            }
            guard let transcript = parsed[path] ?? nil else { continue }
            carried += Int(clamping: size)
            tracks.append((language, transcript))
        }
        guard local != nil || !tracks.isEmpty else {
            return .onlineOnly("the video has no local file and no transcript to show offline")
        }

        var html = ""
        if let local {
            html += "<video id=\"coursepack-video\" class=\"coursepack-video\" controls preload=\"metadata\" playsinline src=\"\(HTMLText.escape(local))\"></video>\n"
            if !tracks.isEmpty { html += captionScript(tracks) }
        } else if let watch = requiresNetwork.first {
            html += "<p class=\"coursepack-online-only\">This video plays online: <a href=\"\(HTMLText.escape(watch))\" target=\"_blank\" rel=\"noopener\">watch it</a>. Its transcript is below.</p>\n"
        }
        if let handout = block.attributes["handout"], !handout.isEmpty {
            html += "<p class=\"coursepack-handout\"><a href=\"\(HTMLText.escape(handout))\">Download the handout</a></p>\n"
        }
        if leftOnline > 0 {
            html += "<p class=\"coursepack-online-only\">\(leftOnline) more transcripts are online only: a page carries at most \(Self.transcriptBytesLimit >> 20) MiB of transcripts.</p>\n"
        }
        for track in tracks {
            html += "<section class=\"coursepack-transcript\" lang=\"\(HTMLText.escape(track.language))\">\n<h2>Transcript (\(HTMLText.escape(track.language)))</h2>\n<ol>\n"
            for cue in track.transcript.cues {
                let time = Transcript.timestamp(cue.start).prefix(8)
                let seconds = cue.start / 1000
                let stamp = local != nil
                    ? "<a href=\"#coursepack-video\" data-seek=\"\(seconds)\">\(time)</a>"
                    : youtubeID().map { "<a href=\"https://www.youtube.com/watch?v=\(HTMLText.escape($0))&amp;t=\(seconds)s\" target=\"_blank\" rel=\"noopener\">\(time)</a>" } ?? String(time)
                html += "<li>\(stamp) \(HTMLText.breakingLines(HTMLText.escape(cue.text)))</li>\n"
            }
            html += "</ol>\n</section>\n"
        }
        if local != nil && !tracks.isEmpty {
            html += """
                <script>
                document.addEventListener("click", function (event) {
                  var link = event.target.closest && event.target.closest("a[data-seek]");
                  var video = document.querySelector("video.coursepack-video");
                  if (!link || !video) return;
                  event.preventDefault();
                  video.currentTime = Number(link.getAttribute("data-seek"));
                  video.play();
                });
                </script>

                """
        }
        return .page(Output(html: html, files: [:], requiresNetwork: local == nil ? requiresNetwork : []))
    }

    /// Captions travel inside the page and are added through the TextTrack API: a `<track>` file
    /// is refused from `file://` pages (Chromium treats it as a cross-origin load) and by some
    /// mobile web views, so a local video would play without them.
    func captionScript(_ tracks: [(language: String, transcript: Transcript)]) -> String {
        let english = Locale(identifier: "en")
        let data = tracks.map { track in
            [
                "language": track.language,
                "label": english.localizedString(forLanguageCode: track.language) ?? track.language,
                "cues": track.transcript.cues.map { [$0.start, $0.end, $0.text] as [Any] },
            ] as [String: Any]
        }
        let json = (try? JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        // "</" would end the script element early.
        let embedded = json.replacingOccurrences(of: "</", with: "<\\/")
        return """
            <script type="application/json" id="coursepack-captions">\(embedded)</script>
            <script>
            (function () {
              var video = document.querySelector("video.coursepack-video");
              var data = JSON.parse(document.getElementById("coursepack-captions").textContent);
              if (!video || !video.addTextTrack || typeof VTTCue === "undefined") return;
              data.forEach(function (captions, index) {
                var track = video.addTextTrack("subtitles", captions.label, captions.language);
                captions.cues.forEach(function (cue) { track.addCue(new VTTCue(cue[0] / 1000, cue[1] / 1000, cue[2])); });
                track.mode = index === 0 ? "showing" : "hidden";
              });
            })();
            </script>

            """
    }

    /// The course's own copy of an externally hosted video, when `static/` holds a file of the
    /// same name (exports often keep the upload next to the CDN link).
    func localCopy(of source: String) -> String? {
        guard !isLocal(source), let name = source.split(separator: "?").first?.split(separator: "/").last.map(String.init),
            Self.videoExtensions.contains(name.split(separator: ".").last.map { $0.lowercased() } ?? ""),
            let path = course.staticFiles.resolve(PercentEncoding.decode(name))
        else { return nil }
        return "/static/" + path
    }

    /// URLs of the encoded renditions an `edx_video_id` video lists in its `<video_asset>`.
    func encodedVideoURLs() -> [String] {
        block.definition.childElements.filter { $0.name == "video_asset" }
            .flatMap { $0.childElements.filter { $0.name == "encoded_video" } }
            .compactMap { $0.attribute("url") }
            .filter { $0.hasPrefix("http://") || $0.hasPrefix("https://") }
    }

    /// `html5_sources` (a JSON list) and `<source src>` children, in that order, without repeats.
    func sources() -> [String] {
        var result: [String] = []
        if let json = block.attributes["html5_sources"], let list = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String] {
            result += list
        }
        result += block.definition.childElements.filter { $0.name == "source" }.compactMap { $0.attribute("src") }
        var seen = Set<String>()
        return result.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    func isLocal(_ source: String) -> Bool {
        let path = source.split(whereSeparator: { $0 == "?" || $0 == "#" }).first.map(String.init) ?? source
        guard path.hasPrefix("/static/") || path.hasPrefix("/asset-v1:") || path.hasPrefix("/c4x/") else { return false }
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return Self.videoExtensions.contains(ext)
    }

    func youtubeID() -> String? {
        if let id = block.attributes["youtube_id_1_0"], !id.isEmpty { return id }
        // youtube="0.75:ID1,1.00:ID2"
        for pair in (block.attributes["youtube"] ?? "").split(separator: ",") where pair.hasPrefix("1.00:") || pair.hasPrefix("1.0:") {
            let id = pair.split(separator: ":").dropFirst().joined()
            if !id.isEmpty { return id }
        }
        return nil
    }

    /// Language → transcript file name, from `transcripts`, `<transcript>` children and `sub`.
    func transcriptFiles() -> [(String, String)] {
        var result: [String: String] = [:]
        if let json = block.attributes["transcripts"], let map = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String] {
            result.merge(map) { first, _ in first }
        }
        for child in block.definition.childElements where child.name == "transcript" {
            if let language = child.attribute("language"), let src = child.attribute("src"), result[language] == nil {
                result[language] = src
            }
        }
        if result["en"] == nil, let sub = block.attributes["sub"], !sub.isEmpty {
            result["en"] = "subs_\(sub).srt.sjson"
        }
        return result.sorted { $0.key < $1.key }
    }
}
