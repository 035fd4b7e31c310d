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
                let transcript = name.lowercased().hasSuffix(".sjson") ? Transcript.parseSJSON(bytes) : Transcript.parseSRT(bytes)
                lines += transcript?.cues.map(\.text) ?? []
            }
            return .plain(lines.joined(separator: "\n"))
        default:
            return nil
        }
    }
}
