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
}
