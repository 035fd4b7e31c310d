import CourseExport
import Foundation
import Testing
import TestSupport

/// What a course's files make a build report is bounded by file and kind, and in length.
@Suite struct CourseIssueBoundTests {
    /// 5,000 empty `<html/>` (each a warning) and 5,000 unusable url_names (each a block left
    /// out) in one file: 20 of each listed, and one issue each counting the rest.
    @Test func manyIssuesOfOneKindInOneFileAreCountedNotListed() throws {
        let empties = String(repeating: "<html/>", count: 5000)
        let unusable = (0..<5000).map { #"<html url_name="../bad\#($0)"/>"# }.joined()
        let course = try makeCourse(["vertical/v1.xml": "<vertical><html url_name=\"h1\"/>\(empties)\(unusable)</vertical>"])
        let loaded = try CourseLoader.load(try ExportDirectory(root: course))
        #expect(loaded.blocks.contains { $0.urlName == "h1" })
        for (list, name) in [(loaded.warnings, "warnings"), (loaded.issues, "issues")] {
            let inFile = list.filter { $0.file == "vertical/v1.xml" }
            #expect(inFile.count == 21, "\(name): \(inFile.count)")
            #expect(inFile.last?.message == "4980 more like these in this file are not listed (a file lists its first 20 of a kind)", "\(name)")
        }
    }

    @Test func aMegabyteAttributeIsQuotedByItsFirstThousandCharacters() throws {
        let long = String(repeating: "x/", count: 500_000)
        let course = try makeCourse(["vertical/v1.xml": #"<vertical><html url_name="h1"/><html url_name="\#(long)"/></vertical>"#])
        let loaded = try CourseLoader.load(try ExportDirectory(root: course))
        let issue = try #require(loaded.issues.first { $0.file == "vertical/v1.xml" })
        #expect(issue.message.utf8.count < 1100 && issue.message.hasSuffix("… (cut)"), "\(issue.message.utf8.count)")
    }

    /// What every descendant copies is bounded where it is read: a url_name longer than a file
    /// name leaves its block out, a display name is cut (CP125).
    @Test func aLongURLNameLeavesItsBlockOutAndALongDisplayNameIsCut() throws {
        let name = String(repeating: "n", count: 256)
        let title = String(repeating: "t", count: 5000)
        let course = try makeCourse([
            "vertical/v1.xml": #"<vertical display_name="\#(title)"><html url_name="h1"/><html url_name="\#(name)">inline</html></vertical>"#,
        ])
        let loaded = try CourseLoader.load(try ExportDirectory(root: course))
        #expect(!loaded.blocks.contains { $0.urlName == name })
        #expect(loaded.issues.contains { $0.id == .unusableURLName && $0.message.contains("longer than the 255") })
        let unit = try #require(loaded.blocks.first { $0.type == "vertical" })
        #expect(unit.displayName == String(repeating: "t", count: 1000) + "…")
        #expect(unit.attributes["display_name"] == unit.displayName)
        #expect(loaded.warnings.contains { $0.id == .longDisplayName && $0.usageID == unit.usageID })
    }
}
