import Foundation
import Manifest
import Testing
import TestSupport

@Suite struct CLITests {
    @Test func buildsTheExampleAndSaysWhereTheBundlesAre() throws {
        let out = TestSupport.temporaryFolder("cli") + "/example"
        let report = out + "-report.json"
        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "--report", report, "--published-at", "2026-11-22T10:00:00Z"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("manifest at \(out)/manifest.json"))
        #expect(result.stderr.contains("warning[CP201]: html/welcome_page.html"), "the missing image is reported with its id and file: \(result.stderr)")
        #expect(result.stderr.contains("/static/images/missing-diagram.png"))

        let json = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(report))) as? [String: Any])
        let counts = try #require(json["counts"] as? [String: Int])
        #expect(counts["built"] == 8 && counts["offline_false"] == 1 && counts["failed"] == 0)
        let warnings = try #require(json["warnings"] as? [[String: Any]])
        #expect(warnings.contains {
            ($0["reference"] as? String) == "/static/images/missing-diagram.png" && ($0["file"] as? String) == "html/welcome_page.html"
                && ($0["id"] as? String) == "CP201"
        })
    }

    /// A host that only builds needs neither libcurl nor the libraries it loads: `coursepack`
    /// does not link the HTTP stack, and `coursepack sync`/`diff` hand over to coursepack-sync.
    @Test func buildDoesNotLoadTheHTTPStackAndSyncNeedsItsHelper() throws {
        let ldd = try #require(TestSupport.which("ldd"))
        let libraries = try TestSupport.run(ldd, [TestSupport.coursepackBinary]).stdout
        #expect(libraries.contains("libFoundation"), "ldd output: \(libraries)")
        #expect(!libraries.contains("libFoundationNetworking") && !libraries.contains("libcurl"))

        let alone = TestSupport.temporaryFolder("cli") + "/coursepack"
        try FileManager.default.copyItem(atPath: TestSupport.coursepackBinary, toPath: alone)
        let result = try TestSupport.run(alone, ["sync", "http://127.0.0.1:9/", "--to", TestSupport.temporaryFolder("cli")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("install coursepack-sync beside coursepack"), "\(result.stderr)")
    }

    /// Each program names itself in its usage; a command `coursepack` hands to a helper keeps
    /// the name the user typed.
    @Test func eachProgramsHelpNamesTheCommandAsTyped() throws {
        let folder = (TestSupport.coursepackBinary as NSString).deletingLastPathComponent
        let sync = try TestSupport.run(folder + "/coursepack-sync", ["--help"]).stdout
        #expect(sync.contains("USAGE: coursepack-sync <subcommand>"), "\(sync)")
        let device = try TestSupport.run(folder + "/coursepack-device", ["--help"]).stdout
        #expect(device.contains("USAGE: coursepack-device <subcommand>"), "\(device)")
        let forwarded = try TestSupport.coursepack(["sync", "--help"]).stdout
        #expect(forwarded.contains("USAGE: coursepack sync [<options>] <source> --to <to>"), "\(forwarded)")
        let served = try TestSupport.coursepack(["serve", "--help"]).stdout
        #expect(served.contains("USAGE: coursepack serve <target>"), "\(served)")
    }

    /// A shell with the block twice would publish every page twice and differently each
    /// build: refused before anything is written, naming the template file.
    @Test func aTemplateWithContentTwiceExitsTwoNamingIt() throws {
        let templates = TestSupport.temporaryFolder("cli")
        try TestSupport.write(["page.mustache": "<main>{{{content}}}</main><aside>{{{content}}}</aside>"], under: templates)
        let out = TestSupport.temporaryFolder("cli") + "/out"
        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "--templates", templates, "-q"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(templates + "/page.mustache"), "\(result.stderr)")
        #expect(result.stderr.contains("exactly once"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func strictTurnsWarningsIntoExitOne() throws {
        let out = TestSupport.temporaryFolder("cli")
        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "--strict", "-q"])
        #expect(result.status == 1)
    }

    @Test func aMissingCourseIsExitTwoNamingThePath() throws {
        let out = TestSupport.temporaryFolder("cli")
        let result = try TestSupport.coursepack(["build", out + "/no-such-course", "--out", out + "/bundles"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(out + "/no-such-course"))
        #expect(!FileManager.default.fileExists(atPath: out + "/bundles"), "nothing was created")
    }

    @Test func aFolderWithoutCourseXMLIsExitTwo() throws {
        let folder = TestSupport.temporaryFolder("cli")
        let result = try TestSupport.coursepack(["build", folder, "--out", folder + "/bundles"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("course.xml"))
    }

    @Test func anUnreadableTarballIsExitTwoNamingTheFile() throws {
        let folder = TestSupport.temporaryFolder("cli")
        try TestSupport.writeBytes([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3], to: folder + "/course.tar.gz")
        let result = try TestSupport.coursepack(["build", folder + "/course.tar.gz", "--out", folder + "/bundles"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(folder + "/course.tar.gz"), "\(result.stderr)")
    }

    @Test func badUsageIsExitTwo() throws {
        let folder = TestSupport.temporaryFolder("cli")
        for arguments in [["build", folder, "--out", folder, "--jobs", "0"], ["build", folder], ["build", folder, "--out", folder, "--published-at", "yesterday"], ["frobnicate"]] {
            let result = try TestSupport.coursepack(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
        }
    }

    @Test func aFailingBlockIsExitOneAndTheRestIsPublished() throws {
        let course = TestSupport.temporaryFolder("cli") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        try TestSupport.write(["html/handout_page.xml": "<html filename='handout_page'"], under: course)
        let out = TestSupport.temporaryFolder("cli")
        let result = try TestSupport.coursepack(["build", course, "--out", out])
        #expect(result.status == 1)
        // The course export's problems gain an id of their own (CP1xx); the file is what is pinned here.
        #expect(result.stderr.contains(/error(\[CP[0-9]{3}\])?: html\/handout_page.xml/), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: out + "/html/welcome_page.zip"))
    }

    // The tree `inspect` prints is pinned whole: GoldenOutputTests, inspect-example.txt.
}
