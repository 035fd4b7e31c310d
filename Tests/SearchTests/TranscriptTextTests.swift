@testable import BlockRenderer
import Foundation
import Testing
import TestSupport

@Suite struct TranscriptTextTests {
    /// The search step reads a SubRip file's text without its times; it must be the text the
    /// page shows, which `parseSRT` gives.
    @Test func cueTextsAreTheTextsTheTranscriptParserGives() throws {
        let folders = [TestSupport.demoCourse + "/static", TestSupport.exampleCourse + "/static"]
        var files = 0
        for folder in folders {
            for name in (try FileManager.default.contentsOfDirectory(atPath: folder)) where name.lowercased().hasSuffix(".srt") {
                let bytes = TestSupport.read(folder + "/" + name)
                let windows = Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
                let oldMac = Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r").utf8)
                for variant in [bytes, windows, oldMac, [0xEF, 0xBB, 0xBF] + bytes] {
                    #expect(Transcript.cueTexts(srt: variant) == (Transcript.parseSRT(variant)?.cues.map(\.text) ?? []), "\(name)")
                }
                files += 1
            }
        }
        #expect(files >= 2)
        let odd = Array("1\n00:00:01,000 --> 00:00:02,000\nWe&#39;re here\nand there\n\n\n2\nno timing\ntext\n\n3\n00:00:03,000 --> 00:00:04,000\nLast".utf8)
        #expect(Transcript.cueTexts(srt: odd) == ["We're here\nand there", "Last"])
        #expect(Transcript.cueTexts(srt: odd) == Transcript.parseSRT(odd)?.cues.map(\.text))
    }

    /// Timing lines are read from their bytes without Unicode work when they are ASCII; that
    /// reading must agree with the general one on every line, odd ones included.
    @Test func asciiTimingsReadAsTheGeneralReaderReadsThem() {
        let alphabet = Array("0123456789:,. \t-+eE".utf8)
        var random = SeededGenerator(state: 23)
        var parsed = 0
        let fixed = ["00:01:02,500", " 00:01:02.500 ", "01:02.5", "\t1:2:3 x", "1::2", ":1:2:", "1,5:2", "1:2:3:4", "+1:-2", "1e1:0", "1e999:00", "nan:00", "99999999999999999999:0", "", " ", "00:00:01,000\u{00A0}"]
        let generated = (0..<4000).map { _ in String(decoding: (0..<Int.random(in: 0...14, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? 0x30 }, as: UTF8.self) }
        for line in fixed + generated {
            let fromBytes = Transcript.milliseconds(ArraySlice(line.utf8)), fromText = Transcript.milliseconds(line)
            #expect(fromBytes == fromText, "\(line.debugDescription)")
            if fromText != nil { parsed += 1 }
        }
        #expect(Transcript.milliseconds(ArraySlice("00:01:02,500".utf8)) == 62_500)
        #expect(parsed >= 50, "the random lines include readable timings: \(parsed)")
        // A hostile timing is no timing: it used to stop the whole build (Int of infinity).
        #expect(Transcript.milliseconds("1e999:00") == nil)
        let hostile = Array("1\n1e999:00 --> 00:00:02,000\nnever shown\n\n2\n00:00:03,000 --> 00:00:04,000\nshown".utf8)
        #expect(Transcript.parseSRT(hostile)?.cues.map(\.text) == ["shown"])
    }
}
