import Foundation
import Testing
import TestSupport

/// A folder source is as untrusted as a server: its archives are read only as regular files and
/// only as far as the manifest's size.
@Suite struct HostileSourceTests {
    @Test(arguments: ["link to /dev/zero", "fifo", "folder", "endless"])
    func anArchiveThatIsNotAPlainFileFailsItsBlockWithoutHanging(kind: String) throws {
        let published = TestSupport.temporaryFolder("source") + "/published"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", published, "-q"]).status == 0)
        let archive = published + "/html/welcome_page.zip"
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
        #expect(!FileManager.default.fileExists(atPath: target + "/html/welcome_page"))
        #expect(FileManager.default.fileExists(atPath: target + "/html/styled_page/index.html"), "the other blocks install")
        // Nothing is left in downloads/ but plain files no larger than the manifest allows.
        let folder = target + "/.coursepack-sync/downloads"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            var info = stat()
            #expect(lstat(folder + "/" + name, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_size < 1 << 20, "\(name)")
        }
    }
}
