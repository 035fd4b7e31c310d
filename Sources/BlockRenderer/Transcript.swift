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

    /// Parses SubRip text; tolerates BOMs, CRLF, missing indices and stray blank lines. Works on
    /// the bytes (line breaks are ASCII, never inside a UTF-8 sequence): a video page renders on
    /// every build, and Foundation's string searching cost more than the rest of the page.
    static func parseSRT(_ bytes: [UInt8]) -> Transcript? {
        var text = ArraySlice(bytes)
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        // CRLF and lone CR become LF.
        var normalized: [UInt8] = []
        normalized.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            index += 1
            if byte == 0x0D {
                normalized.append(0x0A)
                if index < text.endIndex, text[index] == 0x0A { index += 1 }
            } else {
                normalized.append(byte)
            }
        }
        var cues: [Cue] = []
        for chunk in chunks(normalized) {
            let lines = chunk.split(separator: 0x0A, omittingEmptySubsequences: true)
            guard let timing = lines.firstIndex(where: { range(of: arrow, in: $0) != nil }) else { continue }
            let line = lines[timing]
            guard let first = range(of: arrow, in: line), range(of: arrow, in: line[first.upperBound...]) == nil,
                let start = milliseconds(line[..<first.lowerBound]),
                let end = milliseconds(line[first.upperBound...])
            else { continue }
            let body = lines[(timing + 1)...].map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
            cues.append(Cue(start: start, end: end, text: plainText(body)))
        }
        return cues.isEmpty ? nil : Transcript(cues: cues)
    }

    private static let arrow: [UInt8] = Array("-->".utf8)

    /// The text between blank lines: split at every "\n\n", as SubRip separates cues.
    private static func chunks(_ text: [UInt8]) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        var start = 0
        var index = 0
        while index + 1 < text.count {
            if text[index] == 0x0A && text[index + 1] == 0x0A {
                result.append(text[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        result.append(text[start...])
        return result
    }

    private static func range(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index] == needle[0] && haystack[index..<index + needle.count].elementsEqual(needle) {
                return index..<index + needle.count
            }
            index += 1
        }
        return nil
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
        text.utf8.contains(UInt8(ascii: "&")) ? CharacterReferences.decode(Array(text.utf8)[...]) : text
    }

    /// `milliseconds(_: String)` on the bytes of a timing line. Timings are ASCII in every
    /// transcript Studio writes, and a course has thousands of cues: those skip the Unicode
    /// trimming (the only spaces ASCII has are tab and space) and the Foundation-free path
    /// costs a few small strings instead of a scalar walk with property lookups.
    static func milliseconds(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return milliseconds(String(decoding: bytes, as: UTF8.self)) }
        var text = bytes
        while let first = text.first, first == 0x20 || first == 0x09 { text.removeFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        let word = text.split(separator: 0x20, maxSplits: 1, omittingEmptySubsequences: true).first ?? []
        let pieces = word.split(whereSeparator: { $0 == 0x3A })
        guard (2...3).contains(pieces.count) else { return nil }
        var total = 0.0
        for piece in pieces {
            guard let value = Double(String(decoding: piece.map { $0 == 0x2C ? 0x2E : $0 }, as: UTF8.self)) else { return nil }
            total = total * 60 + value
        }
        return wholeMilliseconds(total)
    }

    /// Seconds as whole milliseconds; nil for what no video lasts (`1e999:00` is infinite,
    /// `nan:00` not a number, and a cue at 10^17 s would not fit in an Int).
    private static func wholeMilliseconds(_ seconds: Double) -> Int? {
        let ms = (seconds * 1000).rounded()
        guard ms.isFinite, abs(ms) < 1e15 else { return nil }
        return Int(ms)
    }

    /// `00:01:02,500` or `00:01:02.500` or `01:02.5`.
    static func milliseconds(_ text: String) -> Int? {
        // Trimmed of tabs and Unicode spaces (Zs), then the first word.
        let isSpace = { (scalar: Unicode.Scalar) in scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator }
        var scalars = Substring(text).unicodeScalars[...]
        while let first = scalars.first, isSpace(first) { scalars.removeFirst() }
        while let last = scalars.last, isSpace(last) { scalars.removeLast() }
        let cleaned = String(scalars).split(separator: " ").first.map(String.init) ?? ""
        let pieces = cleaned.map { $0 == "," ? "." : $0 }.split(separator: ":").map { String($0) }
        guard (2...3).contains(pieces.count) else { return nil }
        var total = 0.0
        for piece in pieces {
            guard let value = Double(piece) else { return nil }
            total = total * 60 + value
        }
        return wholeMilliseconds(total)
    }

    static func timestamp(_ ms: Int, separator: String = ".") -> String {
        let h = ms / 3_600_000, m = ms / 60_000 % 60, s = ms / 1000 % 60, f = ms % 1000
        return padded(h, 2) + ":" + padded(m, 2) + ":" + padded(s, 2) + separator + padded(f, 3)
    }

    /// What `%0Nd` prints: zeros after the sign up to `width` characters.
    private static func padded(_ value: Int, _ width: Int) -> String {
        if value < 0 { return "-" + padded(-value, width - 1) }
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
