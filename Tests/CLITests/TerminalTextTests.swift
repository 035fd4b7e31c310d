import Foundation
import Testing
import TestSupport

/// Names, ids and messages printed by every command come from course content, a server's
/// manifest or the LMS: a terminal must never receive their control characters (an escape that
/// retitles the window, clears the screen or writes the clipboard). The LMS's own text is held to
/// this in HostileLMSTests; here, a course and a manifest carry the escapes.
@Suite struct TerminalTextTests {
    /// An SGR colour, an OSC that retitles the terminal (ended by BEL), a C1 CSI, a bidi
    /// override and a bare DEL, the variants a cleaner that only looks for ESC `[` would miss.
    static let hostile = "\u{1B}[31mRed\u{1B}]0;owned\u{07} \u{9B}2J\u{202E}txet\u{7F}"

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) }
    }

    /// The example course with escapes in a block's and the course's display names, as JSON
    /// (policy.json) carries them.
    static func hostileCourse() throws -> String {
        let course = TestSupport.temporaryFolder("terminal") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let escaped = hostile.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" ? String($0) : String(format: "\\u%04x", $0.value) }.joined()
        let policy = """
            {
                "course/2026": { "display_name": "Course \(escaped)", "language": "en" },
                "html/handout_page": { "display_name": "Handout \(escaped)" }
            }
            """
        try TestSupport.write(["policy.json": policy], under: course + "/policies/2026")
        return course
    }

    @Test func namesFromACourseOrAManifestReachNoTerminalWithTheirEscapes() throws {
        let course = try Self.hostileCourse()
        let out = TestSupport.temporaryFolder("terminal") + "/out"
        let device = TestSupport.temporaryFolder("terminal") + "/device"
        var outputs: [(String, TestSupport.ProcessResult)] = []
        outputs.append(("inspect", try TestSupport.coursepack(["inspect", course])))
        outputs.append(("build", try TestSupport.coursepack(["build", course, "--out", out])))
        // The manifest names the block with the escapes: a server could have written it so.
        let manifest = String(decoding: TestSupport.read(out + "/manifest.json"), as: UTF8.self)
        #expect(manifest.contains("Handout \\u001b[31mRed"), "the manifest keeps the name as the course gave it (JSON escapes it)")
        outputs.append(("sync --dry-run", try TestSupport.coursepack(["sync", out, "--to", device, "--dry-run"])))
        outputs.append(("sync", try TestSupport.coursepack(["sync", out, "--to", device])))
        outputs.append(("status --blocks", try TestSupport.coursepack(["status", device, "--blocks"])))
        let plain = TestSupport.temporaryFolder("terminal") + "/plain"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", plain, "-q"]).status == 0)
        outputs.append(("diff", try TestSupport.coursepack(["diff", plain, out])))
        for (command, result) in outputs {
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(!Self.hasControlCharacters(result.stdout + result.stderr), "\(command) printed control characters: \(result.stdout.debugDescription) \(result.stderr.debugDescription)")
        }
        let inspected = try #require(outputs.first?.1.stdout)
        #expect(inspected.contains("Handout Red") && inspected.contains("txet"), "the printable part of the name is kept: \(inspected)")
        let status = outputs[4].1.stdout
        #expect(status.contains("Handout Red"), "\(status)")
    }

    /// An error that names what the course gave (here an unknown block id in `open`) is cleaned
    /// on standard error too.
    @Test func errorsNamingRemoteTextAreCleaned() throws {
        let device = TestSupport.temporaryFolder("terminal") + "/device"
        let out = TestSupport.temporaryFolder("terminal") + "/out"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        #expect(try TestSupport.coursepack(["sync", out, "--to", device]).status == 0)
        let opened = try TestSupport.coursepack(["open", device, "block-v1:x+y+z+type@html+block@" + Self.hostile])
        #expect(opened.status == 2)
        #expect(opened.stderr.contains("txet") && !Self.hasControlCharacters(opened.stdout + opened.stderr), "\(opened.stderr.debugDescription)")
    }
}
