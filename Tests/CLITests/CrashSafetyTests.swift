import Foundation
import Testing
import TestSupport

/// Python's independent check that every archive a manifest names exists with its size and sha256.
func independentlyVerified(_ out: String) throws -> String {
    let script = """
        import hashlib, json, os, sys
        out = sys.argv[1]
        m = json.load(open(os.path.join(out, "manifest.json")))
        bad = []
        for b in m["blocks"]:
            if "archive" not in b: continue
            p = os.path.join(out, b["archive"])
            if not os.path.exists(p): bad.append("missing " + b["archive"]); continue
            data = open(p, "rb").read()
            if len(data) != b["size"] or hashlib.sha256(data).hexdigest() != b["sha256"]: bad.append("differs " + b["archive"])
        print("\\n".join(bad) if bad else "ok")
        """
    return try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, out]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite(.serialized) struct CrashSafetyTests {
    /// Kills builds at random moments; after every kill the folder still holds a complete,
    /// verifiable publish, and the next build completes it.
    @Test func sigkillAtAnyMomentLeavesAVerifiablePublish() throws {
        let course = TestSupport.temporaryFolder("kill") + "/course"
        try TestSupport.copy(TestSupport.demoCourse, to: course)
        let out = TestSupport.temporaryFolder("kill") + "/out"
        let first = try TestSupport.coursepack(["build", course, "--out", out, "-q"])
        #expect(first.status == 0, "\(first.stderr)")
        let htmlFiles = try FileManager.default.contentsOfDirectory(atPath: course + "/html").filter { $0.hasSuffix(".html") }.sorted()
        var rng = SystemRandomNumberGenerator()
        var killedMidway = 0
        for round in 0..<14 {
            // Change a different set of pages each round so many archives are replaced.
            for name in htmlFiles.shuffled(using: &rng).prefix(60) {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: course + "/html/" + name))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("\n<p>round \(round)</p>".utf8))
                try handle.close()
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestSupport.coursepackBinary)
            process.arguments = ["build", course, "--out", out, "-q", "--jobs", "2", "--published-at", "2026-11-\(10 + round)T00:00:00Z"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 5_000...400_000, using: &rng))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                killedMidway += 1
            }
            process.waitUntilExit()
            #expect(try independentlyVerified(out) == "ok", "round \(round)")
            let verify = try TestSupport.coursepack(["verify", out])
            #expect(verify.status == 0, "round \(round): \(verify.stderr)")
        }
        #expect(killedMidway >= 5, "most rounds kill a running build (\(killedMidway) did)")
        let last = try TestSupport.coursepack(["build", course, "--out", out, "-q"])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(try TestSupport.coursepack(["verify", out]).status == 0)
        let leftovers = TestSupport.files(under: out).filter { $0.contains(".tmp-") || $0.contains(".staged-") }
        #expect(leftovers == [], "a completed build cleans up what killed ones left")
    }

    @Test func aSecondBuildWaitsForTheLockThenFailsClearly() throws {
        let out = TestSupport.temporaryFolder("lock")
        // The lock is on the folder itself: no lock file is published.
        let fd = open(out, O_RDONLY | O_DIRECTORY)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)
        let started = Date()
        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "--lock-timeout", "0.5"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("another coursepack build holds the lock"), "\(result.stderr)")
        #expect(Date().timeIntervalSince(started) >= 0.5)
        #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"))
        flock(fd, LOCK_UN)
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
    }

    @Test func verifyAndDiffReportWhatChanged() throws {
        let course = TestSupport.temporaryFolder("diff") + "/course"
        try TestSupport.copy(TestSupport.exampleCourse, to: course)
        let old = TestSupport.temporaryFolder("diff")
        _ = try TestSupport.coursepack(["build", course, "--out", old, "-q"])
        let new = TestSupport.temporaryFolder("diff")
        try TestSupport.copy(old, to: new)
        try TestSupport.write(["html/handout_page.html": "<p>new handout text</p>"], under: course)
        _ = try TestSupport.coursepack(["build", course, "--out", new, "-q", "--published-at", "2026-12-24T00:00:00Z"])
        let diff = try TestSupport.coursepack(["diff", old + "/manifest.json", new, "--json"])
        #expect(diff.status == 0, "\(diff.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(diff.stdout.utf8)) as? [String: Any])
        #expect(json["changed"] as? [String] == ["block-v1:CoursepackX+CP101+2026+type@html+block@handout_page"])
        #expect((json["added"] as? [String])?.isEmpty == true && (json["removed"] as? [String])?.isEmpty == true)
        #expect((json["bytes_to_download"] as? Int ?? 0) > 0)

        try TestSupport.writeBytes(Array("not a zip".utf8), to: new + "/html/welcome_page.zip")
        let verify = try TestSupport.coursepack(["verify", new])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("html/welcome_page.zip"))
        #expect(try TestSupport.coursepack(["verify", old]).status == 0)
    }
}
