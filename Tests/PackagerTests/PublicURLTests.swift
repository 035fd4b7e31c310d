import Foundation
import Manifest
import Testing
import TestSupport

/// `build --public-url`: the official apps download `offline_download.file_url` as it is, so it
/// must be absolute; every other field keeps its relative path.
@Suite struct PublicURLTests {
    static func fileURLs(_ out: String) throws -> [String: (archive: String, url: String)] {
        let manifest = try manifest(in: out)
        var urls: [String: (archive: String, url: String)] = [:]
        for block in manifest.blocks {
            guard let archive = block.archive, let url = block.offlineDownload?.fileURL else { continue }
            urls[block.usageID] = (archive, url)
        }
        return urls
    }

    @Test func fileURLsAreAbsoluteUnderThePublicURLAndFollowItsChanges() throws {
        let course = TestSupport.temporaryFolder("public-url") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let out = TestSupport.temporaryFolder("public-url-out") + "/out"
        let first = try TestSupport.coursepack(["build", course, "--out", out, "--public-url", "https://cdn.example.org/c101"])
        #expect(first.status == 0, "\(first.stderr)")
        let urls = try Self.fileURLs(out)
        #expect(urls.count >= 8)
        for (id, entry) in urls {
            #expect(entry.url == "https://cdn.example.org/c101/" + entry.archive, "\(id)")
        }

        // An edited block is staged beside its published archive: its URL names the staged copy.
        let page = course + "/html/welcome_page.html"
        try (String(contentsOfFile: page, encoding: .utf8) + "<p>edited</p>\n").write(toFile: page, atomically: true, encoding: .utf8)
        let edited = try TestSupport.coursepack(["build", course, "--out", out, "--public-url", "https://cdn.example.org/c101/"])
        #expect(edited.status == 0, "\(edited.stderr)")
        for (id, entry) in try Self.fileURLs(out) {
            #expect(entry.url == "https://cdn.example.org/c101/" + entry.archive, "\(id)")
        }

        // Another URL, then none: every block follows, though no page changed.
        #expect(try TestSupport.coursepack(["build", course, "--out", out, "--public-url", "http://10.0.0.5:8080/offline/c101/"]).status == 0)
        #expect(try Self.fileURLs(out).values.allSatisfy { $0.url == "http://10.0.0.5:8080/offline/c101/" + $0.archive })
        #expect(try TestSupport.coursepack(["build", course, "--out", out]).status == 0)
        #expect(try Self.fileURLs(out).values.allSatisfy { $0.url == $0.archive })
    }

    @Test(arguments: [
        "ftp://cdn.example.org/c101/", "https://cdn.example.org/c101/?token=1", "https://cdn.example.org/c101/#top",
        "https://user:secret@cdn.example.org/c101/", "cdn.example.org/c101", "/c101/", "javascript:alert(1)", "https:///c101/",
        "https://cdn.example.org/c 101/",
    ])
    func aPublicURLThatIsNotAnAbsoluteHTTPFolderIsRefusedBeforeAnythingIsWritten(url: String) throws {
        let out = TestSupport.temporaryFolder("public-url-bad") + "/out"
        let refused = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "--public-url", url])
        #expect(refused.status == 2, "\(url): \(refused.stderr)")
        #expect(refused.stderr.contains("public URL"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"))
    }
}
