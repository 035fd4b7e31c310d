import CourseExport
import Foundation
import Testing
import TestSupport

@Suite struct HostileOLXTests {
    /// 160,000 attributes (1.8 MB) once took 87 s in a release build: each was compared with
    /// every one before it. In one pass it parses in well under a second; the bound below is
    /// what a debug build on a loaded two-core machine needs many times over, and a quadratic
    /// check (some 1.3e10 string comparisons) cannot meet it.
    @Test func anElementWithOneHundredSixtyThousandAttributesParsesInOnePass() throws {
        let count = 160_000
        var document = Array("<html".utf8)
        document.reserveCapacity(count * 12)
        for i in 0..<count { document += Array(" a\(i)=\"\(i)\"".utf8) }
        document += Array("/>".utf8)
        let clock = ContinuousClock()
        let start = clock.now
        let root = try XMLTree.parse(document)
        let elapsed = clock.now - start
        #expect(root.attributes.count == count)
        #expect(root.attributes.last?.name == "a\(count - 1)" && root.attributes.last?.value == "\(count - 1)")
        #expect(elapsed < .seconds(60), "\(elapsed)")
    }

    @Test func aRepeatedAttributeIsStillAnError() {
        #expect(throws: XMLSyntaxError.self) { try XMLTree.parse(Array(#"<a x="1" y="2" x="3"/>"#.utf8)) }
    }

    /// XML compares names as written: an attribute spelled in NFC and one in NFD are two.
    @Test func canonicallyEquivalentAttributeNamesAreDistinct() throws {
        let root = try XMLTree.parse(Array("<a caf\u{E9}=\"1\" cafe\u{301}=\"2\"/>".utf8))
        #expect(root.attributes.map { Array($0.name.utf8) } == [Array("caf\u{E9}".utf8), Array("cafe\u{301}".utf8)])
    }

    /// `]>` inside a quoted entity value (or a comment) of the internal subset is text; the
    /// declaration ends at the real `]>`.
    @Test func theDoctypeSkipperRespectsQuotesAndComments() throws {
        let document = """
            <?xml version="1.0"?>
            <!DOCTYPE html [
              <!ENTITY closer "]>">
              <!ENTITY other ']]>'>
              <!-- a comment with ]> and an apostrophe's -->
            ]>
            <html display_name="after the doctype"><p>text</p></html>
            """
        let root = try XMLTree.parse(Array(document.utf8))
        #expect(root.name == "html")
        #expect(root.attribute("display_name") == "after the doctype")
        #expect(root.text == "text")
        #expect(throws: XMLSyntaxError.self) { try XMLTree.parse(Array("<!DOCTYPE a [ <!ENTITY e \"]>\n<a/>".utf8)) }
    }

    /// A url_name has one identity, its NFC spelling: two spellings of one name are one name
    /// used twice (reported; a later html of a taken name is left out, as the LMS keeps one
    /// block per id), each read from its own file as written, and every usage id holds NFC bytes.
    @Test func nfcAndNFDSpellingsOfAURLNameAreOneNameComparedAsBytes() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let course = try makeCourse([
            "vertical/v1.xml": "<vertical><html url_name=\"\(nfc)\"/><html url_name=\"\(nfd)\"/><html url_name=\"only\u{301}\"/></vertical>",
            "html/\(nfc).xml": #"<html display_name="NFC page">nfc</html>"#,
        ])
        // Written by hand: a Swift dictionary would merge the two spellings as keys.
        writeExactly(course + "/html/\(nfd).xml", #"<html display_name="NFD page">nfd</html>"#)
        writeExactly(course + "/html/only\u{301}.xml", #"<html display_name="NFD only">alone</html>"#)
        let onDisk = Set(try FileManager.default.contentsOfDirectory(atPath: course + "/html").map { Array($0.utf8) })
        #expect(onDisk.isSuperset(of: [Array("\(nfc).xml".utf8), Array("\(nfd).xml".utf8)]), "two files on disk")
        let loaded = try CourseLoader.load(try ExportDirectory(root: course))
        let html = loaded.blocks.filter { $0.type == "html" }
        #expect(html.map(\.displayName) == ["NFC page", "NFD only"], "the later spelling is a duplicate, left out")
        let names = html.map { Array($0.urlName.utf8) }
        try #require(names.count == 2)
        #expect(names[0] == Array(nfc.utf8))
        #expect(names[1] == Array("onl\u{FD}".utf8), "a name written only in NFD is named in NFC")
        #expect(html.allSatisfy { Array($0.usageID.utf8) == Array($0.usageID.precomposedStringWithCanonicalMapping.utf8) })
        #expect(loaded.warnings.contains { $0.message.contains("is used again") })
    }

    /// A hard-linked file may be another name of any file on the disk: refused like a symlink
    /// out of the export, naming the file, while every other block loads.
    @Test func hardLinkedFilesInAFolderExportAreRefused() throws {
        let outside = TestSupport.temporaryFolder("outside")
        try TestSupport.write(["secret.xml": #"<html display_name="SECRET">TOP SECRET</html>"#], under: outside)
        let course = try makeCourse([
            "vertical/v1.xml": #"<vertical><html url_name="h1"/><html url_name="linked"/></vertical>"#,
        ])
        #expect(link(outside + "/secret.xml", course + "/html/linked.xml") == 0)
        let directory = try ExportDirectory(root: course)
        #expect(throws: CourseError.self) { _ = try directory.read("html/linked.xml") }
        do { _ = try directory.read("html/linked.xml") } catch {
            #expect(error.description.contains("html/linked.xml") && error.description.contains("hard link"), "\(error)")
        }
        let loaded = try CourseLoader.load(directory)
        #expect(!loaded.blocks.contains { $0.displayName == "SECRET" })
        #expect(loaded.blocks.contains { $0.urlName == "h1" })
        #expect(loaded.issues.contains { $0.file == "html/linked.xml" && $0.message.contains("hard link") }, "\(loaded.issues)")
    }
}

/// Creates `path` with the bytes of its name exactly as given.
private func writeExactly(_ path: String, _ text: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
    #expect(fd >= 0, "\(path): \(errno)")
    let bytes = Array(text.utf8)
    #expect(write(fd, bytes, bytes.count) == bytes.count)
    close(fd)
}
