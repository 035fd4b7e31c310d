import CourseExport

/// What a learner reads on a block's page, for the search index.
public enum LearnerText: Sendable, Equatable {
    /// HTML whose visible text is the block's (an html block's content, a problem's form).
    case html(String)
    case plain(String)
}

extension BlockRenderer {
    /// The block's learner-visible content, taken from the same renderers that make its page,
    /// so the index can hold nothing the page does not show: a problem's comes from
    /// `ProblemRenderer`, which never writes answers, solutions, hints or `correct` flags; a
    /// video's is its transcripts (not rendered again: the caller asks only for blocks that got
    /// a page). Nil for other types and for a problem shown only online.
    public func learnerText(of block: Block, in course: Course, export: ExportDirectory) -> LearnerText? {
        switch block.type {
        case "html":
            guard let (content, _) = try? htmlContent(of: block, export: export) else { return nil }
            return .html(String(decoding: NetworkContent.process(content).html, as: UTF8.self))
        case "problem":
            guard case .html(var html) = ProblemRenderer(block: block).render() else { return nil }
            // The form's own controls and notes (submit, status, "answers are kept…") follow the
            // question; they are the same on every problem page and say nothing about it.
            if let controls = html.range(of: "<p class=\"coursepack-actions\">") { html = String(html[..<controls.lowerBound]) }
            return .html(html)
        case "video":
            let video = VideoRenderer(block: block, course: course, export: export)
            var lines: [String] = []
            for (_, name) in video.transcriptFiles() {
                guard let path = course.staticFiles.resolve(name), let bytes = try? export.read("static/" + path) else { continue }
                lines += name.lowercased().hasSuffix(".sjson") ? Transcript.parseSJSON(bytes)?.cues.map(\.text) ?? [] : Transcript.cueTexts(srt: bytes)
            }
            return .plain(lines.joined(separator: "\n"))
        default:
            return nil
        }
    }
}

extension Transcript {
    /// The text of a SubRip file's cues, without their times: what the page's transcript shows,
    /// read in one pass over the bytes (parsing every time, as captions need, is most of the
    /// cost of a long transcript).
    static func cueTexts(srt bytes: [UInt8]) -> [String] {
        var texts: [String] = []
        var cue: [String] = []
        var inCue = false
        func finish() {
            if inCue, !cue.isEmpty { texts.append(plainText(cue.joined(separator: "\n"))) }
            cue = []
            inCue = false
        }
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes[3...] : bytes[...]
        // Lines end at CRLF, LF or a lone CR, as `parseSRT` reads them.
        var lines: [ArraySlice<UInt8>] = []
        var start = body.startIndex
        var index = body.startIndex
        while index < body.endIndex {
            let byte = body[index]
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                lines.append(body[start..<index])
                if byte == UInt8(ascii: "\r"), index + 1 < body.endIndex, body[index + 1] == UInt8(ascii: "\n") { index += 1 }
                start = index + 1
            }
            index += 1
        }
        lines.append(body[start..<body.endIndex])
        for line in lines {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                finish()
            } else if !inCue, isTiming(line) {
                inCue = true
            } else if inCue {
                cue.append(String(decoding: line, as: UTF8.self))
            }
        }
        finish()
        return texts
    }

    /// `00:00:01,000 --> 00:00:02,500`: an arrow with a time on each side.
    private static func isTiming(_ line: ArraySlice<UInt8>) -> Bool {
        let arrow = Array("-->".utf8)
        guard let start = line.indices.first(where: { line[$0...].starts(with: arrow) }) else { return false }
        let isDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) }
        return line[..<start].contains(where: isDigit) && line[(start + arrow.count)...].contains(where: isDigit)
    }
}
