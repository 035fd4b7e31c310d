import CourseSearch
import Foundation
import Testing
import TestSupport

/// `index.js` is written by hand for speed; its bytes must stay those JSONEncoder wrote, which
/// published indexes and their content hashes were made with.
@Suite struct SearchIndexEncodingTests {
    /// The encoding the index had before: Foundation's, sorted keys, slashes unescaped.
    static func foundationEncoded(_ index: SearchIndex) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array("window.coursepackSearchIndex = ".utf8) + Array(try encoder.encode(index)) + Array(";\n".utf8)
    }

    @Test func theDemoIndexIsByteForByteWhatJSONEncoderWrote() throws {
        var (_, index) = try publishedIndex(in: try build(TestSupport.demoCourse))
        #expect(index.documents.count > 100)
        #expect((index.parts ?? []).count > 1, "the demo's documents are in several parts")
        // The same documents written whole, in one index.js (as format 1 did).
        index.parts = nil
        #expect(index.encoded() == (try Self.foundationEncoded(index)))
    }

    @Test func awkwardTextIsEscapedAsJSONEncoderEscapesIt() throws {
        let tokenizer = SearchTokenizer(language: "en")
        let awkward = "quote \" backslash \\ slash / tab \t newline \n cr \r bell \u{07} nul \u{0} form \u{0C} back \u{08} del \u{7F} e\u{301} 日本 🎓 \u{2028} </script>"
        let documents = [
            SearchDocument(usageID: "block-v1:a+b+c+type@html+block@x", type: "html", title: awkward, path: [awkward, ""], page: "html/x/index.html", text: awkward, tokenizer: tokenizer),
            SearchDocument(usageID: "u2", type: "video", title: "", path: [], page: nil, text: "", tokenizer: tokenizer),
        ]
        // The search step cuts parts by these counts before writing a byte.
        for document in documents {
            let encoded = EncodedSearchDocument(document)
            var bytes: [UInt8] = []
            encoded.append(to: &bytes)
            #expect(encoded.encodedCount == bytes.count, "\(document.usageID)")
        }
        for index in [
            SearchIndex(courseID: "course-v1:a+b+c", language: awkward, documents: documents, textVersion: 3),
            SearchIndex(courseID: "c", language: "", documents: [], textVersion: 0),
        ] {
            #expect(index.encoded() == (try Self.foundationEncoded(index)))
            #expect(try SearchIndex.decode(index.encoded(), path: "index.js") == index)
        }
    }

    /// A rebuild reads an unchanged block's text and terms back from the document the last
    /// index held: the literals found are those written, for awkward text, with and without a
    /// page and a path, and bytes of any other shape (every cut of a document among them) give
    /// none rather than a wrong slice.
    @Test func theLiteralsOfAWrittenDocumentAreReadBackFromItsBytes() throws {
        let tokenizer = SearchTokenizer(language: "en")
        let awkward = "quote \" backslash \\ \\\" slash / tab \t newline \n nul \u{0} 日本 🎓 \u{2028} </script> \"text\":\"x\""
        let documents = [
            SearchDocument(usageID: "u1", type: "html", title: awkward, path: [awkward, "", "],\"path_terms\":\""], page: "html/x/index.html", text: awkward, tokenizer: tokenizer),
            SearchDocument(usageID: "u2", type: "video", title: "", path: [], page: nil, text: "", tokenizer: tokenizer),
            SearchDocument(usageID: "u3", type: "problem", title: "Quiz", path: ["One"], page: nil, text: "Which river?", tokenizer: tokenizer),
        ]
        for document in documents {
            let encoded = EncodedSearchDocument(document)
            var bytes: [UInt8] = []
            encoded.append(to: &bytes)
            let found = try #require(EncodedSearchDocument.literals(in: bytes[...]), "\(document.usageID)")
            #expect(Array(found.text) == Array(encoded.textLiteral))
            #expect(Array(found.bodyTerms) == Array(encoded.bodyTermsLiteral))
            #expect(Array(found.usageID) == Array("\"\(document.usageID)\"".utf8))
            #expect(EncodedSearchDocument.literals(in: (bytes + Array(",".utf8) + bytes)[...]) == nil, "two documents are not one")
            // The same bytes inside a part: slices of a larger buffer.
            let part = Array("[".utf8) + bytes + Array("]".utf8)
            #expect(EncodedSearchDocument.literals(in: part[1..<(part.count - 1)]).map { Array($0.text) } == Array(encoded.textLiteral))
            for cut in 1..<bytes.count {
                #expect(EncodedSearchDocument.literals(in: bytes[cut...]) == nil, "\(document.usageID) from \(cut)")
            }
            for cut in 0..<bytes.count {
                #expect(EncodedSearchDocument.literals(in: bytes[..<cut]) == nil, "\(document.usageID) cut at \(cut)")
            }
        }
        #expect(EncodedSearchDocument.literals(in: Array(#"{"body_terms":"a","path":["b"],"text":"c"}"#.utf8)[...]) == nil)
        #expect(EncodedSearchDocument.literals(in: Array("[]".utf8)[...]) == nil)
    }
}
