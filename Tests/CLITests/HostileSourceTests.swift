import Foundation
import Testing
import TestSupport

/// A folder source is as untrusted as a server: its archives are read only as regular files and
/// only as far as the manifest's size.
@Suite struct HostileSourceTests {
    /// The example course published into a fresh folder.
    func publishedExample() throws -> String {
        let published = TestSupport.temporaryFolder("source") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        return published
    }

    @Test(arguments: ["link to /dev/zero", "fifo", "folder", "endless"])
    func anArchiveThatIsNotAPlainFileFailsItsBlockWithoutHanging(kind: String) throws {
        let published = try publishedExample()
        let archive = published + "/" + (try fetchedPath(ofPage: "html/welcome_page", in: published))
        unlink(archive)
        switch kind {
        case "link to /dev/zero": try FileManager.default.createSymbolicLink(atPath: archive, withDestinationPath: "/dev/zero")
        case "fifo": #expect(mkfifo(archive, 0o644) == 0)
        case "folder": try FileManager.default.createDirectory(atPath: archive, withIntermediateDirectories: false)
        default:
            // A regular file far larger than the manifest says: copied only to size + 1, then refused.
            try TestSupport.writeBytes([UInt8](repeating: 0x41, count: 8 << 20), to: archive)
        }
        let target = TestSupport.temporaryFolder("source") + "/device"
        let started = Date()
        let result = try TestSupport.coursepack(["sync", published, "--to", target])
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("welcome_page"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: target + exampleFolder + "/html/welcome_page"))
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/html/styled_page/index.html"), "the other blocks install")
        // Nothing is left in downloads/ but plain files no larger than the manifest allows.
        let folder = target + exampleFolder + "/.coursepack-sync/downloads"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            var info = stat()
            #expect(lstat(folder + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_size < 1 << 20, "\(name)")
        }
    }

    /// A server sending more than the manifest promises is cut off at that size.
    @Test func anEndlessBodyIsCutAtTheManifestSize() throws {
        let published = try publishedExample()
        let page = try fetchedPath(ofPage: "html/welcome_page", in: published)
        let (url, log, process) = try startFaultServer(serving: published, faults: #"{"/\#(page)": {"endless": 300000000}}"#)
        defer { #expect(process.stop(), "the fault server outlived its test") }
        let target = TestSupport.temporaryFolder("source") + "/device"
        let result = try TestSupport.coursepack(["sync", url, "--to", target])
        #expect(result.status == 1 && result.stderr.contains("more than the"), "\(result.stderr)")
        let sent = String(decoding: TestSupport.read(log), as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("SENT ") }
            .compactMap { Int($0.split(separator: " ").last ?? "") }
        #expect(!sent.isEmpty && sent.allSatisfy { $0 < 64 << 20 }, "the server could push \(sent) bytes")
        #expect(FileManager.default.fileExists(atPath: target + exampleFolder + "/html/styled_page/index.html"))
    }

    /// One byte a second never trips the idle timeout, but the transfer has a deadline.
    @Test func aTricklingServerCannotHoldASync() throws {
        let published = try publishedExample()
        let page = try fetchedPath(ofPage: "html/welcome_page", in: published)
        let (url, _, process) = try startFaultServer(serving: published, faults: #"{"/\#(page)": {"trickle": 0.5}}"#)
        defer { #expect(process.stop(), "the fault server outlived its test") }
        let target = TestSupport.temporaryFolder("source") + "/device"
        let started = Date()
        let result = try TestSupport.coursepack([
            "sync", url, "--to", target, "--connect-timeout", "1", "--idle-timeout", "2", "--min-speed", "100000",
        ])
        let seconds = Date().timeIntervalSince(started)
        #expect(result.status == 1 && result.stderr.contains("slower than --min-speed"), "\(result.stderr)")
        // Four attempts of about 3 s each, where the idle timeout alone would allow the ~20 minutes
        // the archive takes at this pace.
        #expect(seconds < 40, "\(seconds) s")
    }
}
