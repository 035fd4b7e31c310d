import Foundation
import LinkRewriter

/// A timed transcript read from SubRip (`.srt`) or edX's `.sjson`: captions for a local video
/// and readable text beside it.
struct Transcript: Equatable {
    struct Cue: Equatable {
        var start: Int  // milliseconds
        var end: Int
        var text: String
    }

    var cues: [Cue]

    /// Parses SubRip text; tolerates BOMs, CRLF, missing indices and stray blank lines.
    static func parseSRT(_ bytes: [UInt8]) -> Transcript? {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        text = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        var cues: [Cue] = []
        for chunk in text.components(separatedBy: "\n\n") {
            let lines = chunk.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            guard let timing = lines.firstIndex(where: { $0.contains("-->") }) else { continue }
            let parts = lines[timing].components(separatedBy: "-->")
            guard parts.count == 2, let start = milliseconds(parts[0]), let end = milliseconds(parts[1]) else { continue }
            let body = lines[(timing + 1)...].joined(separator: "\n")
            cues.append(Cue(start: start, end: end, text: plainText(body)))
        }
        return cues.isEmpty ? nil : Transcript(cues: cues)
    }

    /// edX's YouTube-style transcript: `{"start": [ms], "end": [ms], "text": [..]}`.
    static func parseSJSON(_ bytes: [UInt8]) -> Transcript? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let starts = object["start"] as? [NSNumber], let ends = object["end"] as? [NSNumber], let texts = object["text"] as? [String]
        else { return nil }
        let cues = zip(zip(starts, ends), texts).map { Cue(start: $0.0.intValue, end: $0.1.intValue, text: plainText($1)) }
        return cues.isEmpty ? nil : Transcript(cues: cues)
    }

    /// Caption text as a learner reads it. Transcripts exported from Studio carry HTML character
    /// references (`we&#39;re`); they are decoded once here, so the page escapes the text once.
    static func plainText(_ text: String) -> String {
        text.contains("&") ? CharacterReferences.decode(Array(text.utf8)[...]) : text
    }

    /// `00:01:02,500` or `00:01:02.500` or `01:02.5`.
    static func milliseconds(_ text: String) -> Int? {
        let cleaned = text.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
        let pieces = cleaned.replacingOccurrences(of: ",", with: ".").split(separator: ":")
        guard (2...3).contains(pieces.count) else { return nil }
        var total = 0.0
        for piece in pieces {
            guard let value = Double(piece) else { return nil }
            total = total * 60 + value
        }
        return Int((total * 1000).rounded())
    }

    static func timestamp(_ ms: Int, separator: String = ".") -> String {
        let h = ms / 3_600_000, m = ms / 60_000 % 60, s = ms / 1000 % 60, f = ms % 1000
        return String(format: "%02d:%02d:%02d%@%03d", h, m, s, separator, f)
    }
}
