import Foundation
import Testing
import TestSupport

/// Variants of issue 29's findings that the fixes for the plain attacks do not cover yet, found
/// by attacking the built programs from outside (a hostile LMS, a hostile manifest server, a
/// hostile course author). Each test fails on the code as merged and names what it shows.
extension OutboxTests {
    // MARK: - A response that never ends (finding 7, in time)

    /// An LMS that answers 200 and then sends one byte every `interval` seconds: no idle timeout
    /// ever fires, so only a deadline on the whole request ends it. The submit must end within a
    /// few times its timeouts (here 3 + 3 s), holding the target's lock no longer, and keep the
    /// answer. Variants: on problem_check, on the completions batch, and a faster trickle.
    @Test(arguments: [("problem", 1.0), ("completion", 1.0), ("problem", 0.2)])
    func aTrickledAnswerIsCutWithinItsDeadline(endpoint: String, interval: Double) throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        defer { #expect(lms.process.stop(), "the fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        #expect(try TestSupport.coursepack(["open", target, Self.quiz]).status == 0)
        try lms.fail([endpoint == "problem" ? Self.quiz : "completion": [["trickle": interval]]])
        let started = Date()
        let run = try ChildProcess(TestSupport.coursepackBinary, [
            "sync", published, "--to", target, "--submit", "--lms-url", lms.url, "--lms-token-file", token, "--lms-username", "learner1",
            "--connect-timeout", "3", "--idle-timeout", "3",
        ])
        while run.process.isRunning && Date().timeIntervalSince(started) < 60 { usleep(200_000) }
        let took = Date().timeIntervalSince(started)
        let ended = !run.process.isRunning
        #expect(run.stop(), "the submit could not be stopped")
        #expect(ended && took < 30, "a trickled \(endpoint) response held the submit (and the target's lock) for \(Int(took)) s and more")
        if endpoint == "problem" {
            let kept = try states(target)
            #expect(kept.allSatisfy { $0.hasSuffix(" pending") }, "\(kept)")
        }
    }

    // MARK: - Proxies from the environment (finding 14)

    /// `--lms-url http://127.0.0.1:…` is let through as loopback, but libcurl sends a request to
    /// whatever proxy the environment names, bearer token and all, over plain http, and URLSession
    /// on Linux cannot turn that off. The token must reach the configured origin only: with such
    /// a proxy set, nothing is sent and the answer is kept with the reason; with the host in
    /// `no_proxy`, it goes direct. Variants: `http_proxy`, `ALL_PROXY`, `all_proxy`, and
    /// `localhost` instead of the address.
    @Test(arguments: [("http_proxy", "127.0.0.1"), ("ALL_PROXY", "127.0.0.1"), ("all_proxy", "localhost")])
    func aProxyFromTheEnvironmentNeverSeesTheToken(variable: String, host: String) throws {
        let (course, published, target, token) = try device()
        let lms = try startLMS(course: course)
        let proxy = try startLMS(course: course)
        defer { #expect(lms.process.stop() && proxy.process.stop(), "a fake LMS outlived its test") }
        #expect(try answer(target, at: "2026-11-23T09:00:01.000Z", fields: ["input_offline_quiz_2_1": "choice_1"]).status == 0)
        let url = lms.url.replacingOccurrences(of: "127.0.0.1", with: host)
        let command = [TestSupport.coursepackBinary, "sync", published, "--to", target, "--submit", "--lms-url", url, "--lms-token-file", token, "--connect-timeout", "3"]
        let result = try TestSupport.run("/usr/bin/env", ["\(variable)=\(proxy.url)"] + command)
        #expect(proxy.requests().isEmpty, "the proxy named by \(variable) got a request: \(proxy.requests())")
        #expect(lms.requests().isEmpty && result.status == 1, "\(result.stdout)\(result.stderr)")
        let listed = try TestSupport.coursepack(["answers", target]).stdout
        #expect(listed.contains("pending") && listed.contains(variable), "the answer is kept with the reason: \(listed)")
        // The host listed in no_proxy goes direct: the answer reaches the configured LMS.
        let direct = try TestSupport.run("/usr/bin/env", ["\(variable)=\(proxy.url)", "no_proxy=\(host)"] + command)
        #expect(proxy.requests().isEmpty && lms.requests().count == 1 && direct.status == 0, "\(direct.stdout)\(direct.stderr)")
    }
}

/// Text a hostile manifest server or course author writes (display names, titles) printed by the
/// CLI: finding 14's rule (control characters from remote text are removed before printing) for
/// the manifest and the course's own names, not only the LMS's answers.
@Suite(.serialized) struct ManifestTerminalTextTests {
    /// ESC sequences (an OSC that retitles the terminal, a colour), C1 controls (CSI 0x9B, OSC
    /// 0x9D) and a bidirectional override.
    static let hostile = "\u{1B}]0;owned\u{07}\u{1B}[31mRED\u{9B}2J\u{9D}0;pwn\u{9C}\u{202E}GNP"

    static func controls(in text: String) -> [String] {
        text.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
        }.map { String(format: "U+%04X", $0.value) }
    }

    /// The example course, built; `change` edits the published manifest's JSON object.
    static func published(_ change: (inout [String: Any]) -> Void) throws -> (original: String, hostile: String) {
        let folder = TestSupport.temporaryFolder("terminal")
        try TestSupport.copy(TestSupport.exampleCourse, to: folder + "/course")
        #expect(try TestSupport.coursepack(["build", folder + "/course", "--out", folder + "/published", "-q"]).status == 0)
        try TestSupport.copy(folder + "/published", to: folder + "/hostile")
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(folder + "/hostile/manifest.json"))) as? [String: Any])
        change(&manifest)
        try TestSupport.writeBytes(Array(try JSONSerialization.data(withJSONObject: manifest)), to: folder + "/hostile/manifest.json")
        return (folder + "/published", folder + "/hostile")
    }

    /// A manifest server names every block and outline entry with escapes: `status` (plain,
    /// `--blocks`, `--verify`) and `diff` print them raw, as `sync` does not.
    @Test func namesInAHostileManifestAreNotPrintedRaw() throws {
        let (original, hostile) = try Self.published { manifest in
            for key in ["blocks", "outline"] {
                manifest[key] = (manifest[key] as? [[String: Any]] ?? []).enumerated().map { index, entry in
                    var entry = entry
                    entry["display_name"] = Self.hostile + ((entry["display_name"] as? String) ?? "")
                    // Two changed blocks, so `diff` lists them.
                    if key == "blocks" && index < 2 { entry["content_hash"] = String(repeating: "0", count: 64) }
                    return entry
                }
            }
        }
        let target = TestSupport.temporaryFolder("terminal") + "/device"
        let commands: [[String]] = [
            ["sync", hostile, "--to", target], ["sync", hostile, "--to", target, "--dry-run"], ["status", target], ["status", target, "--blocks"],
            ["status", target, "--verify"], ["diff", original, hostile],
        ]
        for command in commands {
            let result = try TestSupport.coursepack(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(Self.controls(in: result.stdout + result.stderr).isEmpty, "`\(command.prefix(1).joined()) \(command.dropFirst(2).joined(separator: " "))` printed \(Self.controls(in: result.stdout + result.stderr))")
        }
    }

    /// A course author's display name with C1 controls and a bidi override (XML allows both):
    /// `inspect`, `status --blocks` and `search` print them raw.
    @Test func namesACourseAuthorWroteAreNotPrintedRaw() throws {
        let folder = TestSupport.temporaryFolder("terminal")
        try TestSupport.copy(TestSupport.exampleCourse, to: folder + "/course")
        let page = folder + "/course/html/welcome_page.xml"
        let xml = String(decoding: TestSupport.read(page), as: UTF8.self)
        try #require(xml.contains(#"display_name="Welcome page""#))
        try TestSupport.writeBytes(Array(xml.replacingOccurrences(of: #"display_name="Welcome page""#, with: #"display_name="&#x9b;2J&#x9d;0;pwn&#x9c;&#x202e;Welcome page""#).utf8), to: page)
        #expect(try TestSupport.coursepack(["build", folder + "/course", "--out", folder + "/published", "-q"]).status == 0)
        #expect(try TestSupport.coursepack(["sync", folder + "/published", "--to", folder + "/device"]).status == 0)
        for command in [["inspect", folder + "/course"], ["status", folder + "/device", "--blocks"], ["search", folder + "/device", "welcome"]] {
            let result = try TestSupport.coursepack(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(Self.controls(in: result.stdout + result.stderr).isEmpty, "`\(command[0])` printed \(Self.controls(in: result.stdout + result.stderr))")
        }
    }
}

extension ManifestTerminalTextTests {
    /// Adds a file named `name` to the published `html/welcome_page.zip` and fixes its manifest
    /// entry (size, sha256), as a hostile publisher would.
    static func addEntry(named name: String, to published: String) throws {
        let script = """
            import hashlib, io, json, sys, zipfile
            root, name = sys.argv[1], sys.argv[2]
            path = root + "/html/welcome_page.zip"
            source = zipfile.ZipFile(path)
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w") as packed:
                for info in source.infolist():
                    packed.writestr(info, source.read(info))
                packed.writestr("static/" + name, "x")
            data = out.getvalue()
            open(path, "wb").write(data)
            manifest = json.load(open(root + "/manifest.json"))
            for block in manifest["blocks"]:
                if block.get("archive") == "html/welcome_page.zip":
                    block["size"], block["sha256"] = len(data), hashlib.sha256(data).hexdigest()
                    block["offline_download"]["file_size"] = len(data)
            json.dump(manifest, open(root + "/manifest.json", "w"))
            """
        let result = try TestSupport.run(try #require(TestSupport.which("python3")), ["-c", script, published, name])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// An archive entry named with a bidirectional override (or an isolate, or one after a C1
    /// control, whose refusal quotes the rest raw) is installed, and `sync` and `status
    /// --verify` print its name as it is: `evil<RLO>gpj.exe` shows as `evilexe.jpg`.
    @Test(arguments: ["evil\u{202E}gpj.exe", "evil\u{2066}gpj.exe", "a\u{85}b\u{202E}gpj.exe"])
    func anArchiveEntryNameIsNotPrintedRaw(name: String) throws {
        let (_, hostile) = try Self.published { _ in }
        try Self.addEntry(named: name, to: hostile)
        let target = TestSupport.temporaryFolder("terminal") + "/device"
        let synced = try TestSupport.coursepack(["sync", hostile, "--to", target])
        #expect(Self.controls(in: synced.stdout + synced.stderr).isEmpty, "`sync` printed \(Self.controls(in: synced.stdout + synced.stderr))")
        let installed = target + "/CoursepackX+CP101+2026/html/welcome_page/static/" + name
        guard unlink(installed) == 0 else { return }  // refused, as it may be
        let status = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(status.stdout.contains("damaged:"), "\(status.stdout)")
        #expect(Self.controls(in: status.stdout + status.stderr).isEmpty, "`status --verify` printed \(Self.controls(in: status.stdout + status.stderr))")
    }
}

/// A manifest server that trickles: the manifest's deadline is reckoned from the manifest size
/// limit (64 MiB at `--min-speed`, over an hour at the default 16 KiB/s, 18 h at 1,000 B/s), not
/// from what arrives, so one byte a second holds `sync` and `diff` that long, however short the
/// timeouts given. A transfer slower than `--min-speed` must be cut once `--connect-timeout`
/// and one `--idle-timeout` are past, as docs/cli.md says of every transfer. Variants: `sync`,
/// `sync --dry-run`, `diff`.
@Suite(.serialized) struct TrickledManifestTests {
    @Test(arguments: [["sync", "--to", "device"], ["sync", "--to", "device", "--dry-run"], ["diff", "published"]])
    func aTrickledManifestIsCutAtTheMinimumSpeed(command: [String]) throws {
        let folder = TestSupport.temporaryFolder("trickle")
        try TestSupport.copy(TestSupport.exampleCourse, to: folder + "/course")
        #expect(try TestSupport.coursepack(["build", folder + "/course", "--out", folder + "/published", "-q"]).status == 0)
        let server = try startFaultServer(serving: folder + "/published", faults: #"{"/manifest.json": {"trickle": 1}}"#)
        defer { #expect(server.process.stop(), "the fault server outlived its test") }
        let arguments = [command[0], server.url + "/manifest.json"] + command.dropFirst().map { $0 == "device" || $0 == "published" ? folder + "/" + $0 : $0 }
        let started = Date()
        let run = try ChildProcess(TestSupport.coursepackBinary, arguments + ["--connect-timeout", "3", "--idle-timeout", "3", "--min-speed", "1000"])
        while run.process.isRunning && Date().timeIntervalSince(started) < 40 { usleep(200_000) }
        let took = Date().timeIntervalSince(started)
        let ended = !run.process.isRunning
        #expect(run.stop(), "coursepack could not be stopped")
        #expect(ended && took < 30, "`\(command[0])` of a manifest trickled at 1 B/s ran \(Int(took)) s and more (--min-speed 1000)")
    }
}

/// A publish target someone else can write to (a shared web root, a mounted share): a link
/// planted where a course's folder (or one of its type folders) will go is followed, and the
/// manifest, the record and the archives are written, and later deleted, outside the target.
/// The folder's name is predictable (`CourseFolder.name`), so it can be planted before the first
/// publish. Variants: the course folder a link, a type folder a link, the record a link.
@Suite(.serialized) struct HostilePublishTargetTests {
    @Test(arguments: ["", "/html", "/.coursepack-publish.json"])
    func aLinkPlantedInTheTargetIsNotFollowed(planted: String) throws {
        let folder = TestSupport.temporaryFolder("target")
        try TestSupport.copy(TestSupport.exampleCourse, to: folder + "/course")
        #expect(try TestSupport.coursepack(["build", folder + "/course", "--out", folder + "/published", "-q"]).status == 0)
        let courseFolder = folder + "/target/course-v1_3ACoursepackX_2BCP101_2B2026-484a79eb"
        try FileManager.default.createDirectory(atPath: planted.isEmpty ? folder + "/target" : courseFolder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/elsewhere", withIntermediateDirectories: true)
        let elsewhere = planted.hasSuffix(".json") ? folder + "/elsewhere/victim.json" : folder + "/elsewhere"
        if planted.hasSuffix(".json") { try TestSupport.writeBytes(Array("precious".utf8), to: elsewhere) }
        try FileManager.default.createSymbolicLink(atPath: courseFolder + planted, withDestinationPath: elsewhere)
        let result = try TestSupport.coursepack(["publish", folder + "/published", "--to", folder + "/target"])
        let outside = try FileManager.default.contentsOfDirectory(atPath: folder + "/elsewhere")
        let victim = planted.hasSuffix(".json") ? String(decoding: TestSupport.read(elsewhere), as: UTF8.self) : "precious"
        #expect(outside.filter { $0 != "victim.json" }.isEmpty && victim == "precious", "publish wrote through the link at \(planted.isEmpty ? "the course folder" : planted): \(outside), victim: \(victim.prefix(40)) (\(result.stdout)\(result.stderr))")
    }
}
