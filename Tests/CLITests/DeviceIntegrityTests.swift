import Foundation
import Manifest
import Testing
import TestSupport

/// A device's installed courses stay what their local manifests say (issue 29, findings 11 and
/// 15): a sync stopped by a full disk or a kill leaves every block wholly old or wholly new
/// under a manifest naming that version, and `status --verify` reports any folder that differs.
@Suite(.serialized) struct DeviceIntegrityTests {
    /// A course of `blocks` html pages; each page says which `version` it is and carries
    /// `padding` random characters (so a new version takes room on the disk).
    static func generatedCourse(blocks: Int, padding: Int, version: Int, at root: String) throws {
        var rng = SystemRandomNumberGenerator()
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var files = [
            "course.xml": #"<course url_name="r" org="O" course="N"/>"#,
            "course/r.xml": #"<course><chapter url_name="c"/></course>"#,
            "chapter/c.xml": #"<chapter><sequential url_name="s"/></chapter>"#,
            "sequential/s.xml": #"<sequential><vertical url_name="v"/></sequential>"#,
            "vertical/v.xml": "<vertical>" + (0..<blocks).map { "<html url_name=\"b\($0)\"/>" }.joined() + "</vertical>",
        ]
        for block in 0..<blocks {
            let noise = String(decoding: (0..<padding).map { _ in letters.randomElement(using: &rng) ?? 65 }, as: UTF8.self)
            files["html/b\(block).xml"] = "<html filename=\"b\(block)\"/>"
            files["html/b\(block).html"] = "<p>block \(block) version \(version)</p><p>\(noise)</p>"
        }
        try TestSupport.write(files, under: root)
    }

    /// Two publishes of one course: small pages, then pages of `padding` characters each.
    static func twoVersions(blocks: Int = 150, padding: Int = 20_000) throws -> (v1: String, v2: String) {
        let folder = TestSupport.temporaryFolder("versions")
        var published: [String] = []
        for (version, size) in [(1, 10), (2, padding)] {
            try generatedCourse(blocks: blocks, padding: size, version: version, at: folder + "/course\(version)")
            let out = folder + "/published\(version)"
            let built = try TestSupport.coursepack(["build", folder + "/course\(version)", "--out", out, "-q"])
            #expect(built.status == 0, "\(built.stderr)")
            published.append(out)
        }
        return (published[0], published[1])
    }

    /// Every block the local manifest names holds the page of the version whose archive the
    /// manifest names, and no block folder is there that it does not name. Returns how many
    /// blocks are at each version.
    static func installedAsNamed(_ courseRoot: String, versions: [String]) throws -> [Int: Int] {
        var version: [String: Int] = [:]
        for (number, published) in versions.enumerated() {
            for block in try #require(try ManifestFile.read(published + "/manifest.json")).blocks {
                if let sha = block.sha256 { version[block.usageID + " " + sha] = number + 1 }
            }
        }
        let local = try #require(try ManifestFile.read(courseRoot + "/manifest.json"))
        var counts: [Int: Int] = [:]
        var named = Set<String>()
        for block in local.blocks where block.type == "html" {
            let archive = try #require(block.archive)
            named.insert(String(archive.dropLast(4)))
            let number = try #require(version[block.usageID + " " + (block.sha256 ?? "")], "\(block.usageID): an archive no publish has")
            counts[number, default: 0] += 1
            let page = String(decoding: TestSupport.read(courseRoot + "/" + archive.dropLast(4) + "/index.html"), as: UTF8.self)
            #expect(page.contains("version \(number)</p>"), "\(archive): the manifest names version \(number), the folder holds another")
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: courseRoot + "/html")) ?? [] where !name.hasPrefix(".") {
            #expect(named.contains("html/" + name), "html/\(name) is installed but the manifest does not name it")
        }
        return counts
    }

    static let courseFolder = "/O+N+r"

    /// A real full disk (a tmpfs too small for the new version), of several sizes so that it
    /// fills at different moments: while unpacking, while downloading, or when the manifest is
    /// written. Then, with room, a sync completes.
    @Test(arguments: ["3m", "4m", "5m", "5500k", "6m", "7m"])
    func aFullDiskDuringASyncLeavesEveryBlockAsTheLocalManifestSays(size: String) throws {
        let (v1, v2) = try Self.twoVersions()
        let mountPoint = TestSupport.temporaryFolder("fulldisk")
        let mount = try TestSupport.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint])
        guard mount.status == 0 else {
            Issue.record("cannot mount a small tmpfs to simulate a full disk (the test needs root): \(mount.stderr)")
            return
        }
        defer { _ = try? TestSupport.run("/bin/umount", [mountPoint]) }
        let target = mountPoint + "/device"
        let first = try TestSupport.coursepack(["sync", v1, "--to", target])
        #expect(first.status == 0, "\(first.stderr)")

        let full = try TestSupport.coursepack(["sync", v2, "--to", target, "--jobs", "2"])
        #expect(full.status != 0, "the new version cannot fit in \(size): \(full.stdout)")
        #expect(full.stderr.contains("No space left on device"), "\(full.stderr)")
        let counts = try Self.installedAsNamed(target + Self.courseFolder, versions: [v1, v2])
        #expect(counts.values.reduce(0, +) == 150, "\(counts)")
        let verify = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!verify.stdout.contains("damaged:") && !verify.stdout.contains("missing:"), "\(verify.stdout)")

        #expect(try TestSupport.run("/bin/mount", ["-o", "remount,size=64m", mountPoint]).status == 0)
        let later = try TestSupport.coursepack(["sync", v2, "--to", target])
        #expect(later.status == 0, "\(later.stderr)")
        #expect(try Self.installedAsNamed(target + Self.courseFolder, versions: [v1, v2]) == [2: 150])
        let clean = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!clean.stdout.contains("damaged:") && !clean.stdout.contains("missing:") && !clean.stdout.contains("leftover:"), "\(clean.stdout)")
    }

    /// A sync killed right after it swapped in block `watched` (found by polling its page), or
    /// at a fixed delay: whatever it left, a block is either as the local manifest says or
    /// reported by `status --verify`, and the next sync repairs it.
    @Test(arguments: [(0, 0), (29, 0), (59, 0), (-1, 40), (-1, 250)])
    func aSyncKilledAfterASwapIsReportedOrConsistentAndRepaired(watched: Int, afterMilliseconds: Int) throws {
        let (v1, v2) = try Self.twoVersions(blocks: 60, padding: 60_000)
        let target = TestSupport.temporaryFolder("killed") + "/device"
        #expect(try TestSupport.coursepack(["sync", v1, "--to", target]).status == 0)
        let courseRoot = target + Self.courseFolder
        let sync = try ChildProcess(TestSupport.coursepackBinary, ["sync", v2, "--to", target, "--jobs", "1"])
        if watched >= 0 {
            let page = courseRoot + "/html/b\(watched)/index.html"
            let deadline = Date().addingTimeInterval(120)
            while sync.process.isRunning, Date() < deadline, !String(decoding: TestSupport.read(page), as: UTF8.self).contains("version 2</p>") {
                usleep(500)
            }
        } else {
            usleep(useconds_t(afterMilliseconds * 1000))
        }
        kill(sync.pid, SIGKILL)
        _ = sync.stop()
        let local = try #require(try ManifestFile.read(courseRoot + "/manifest.json"))
        let verify = try TestSupport.coursepack(["status", target, "--verify"])
        let v2Entries = Dictionary(uniqueKeysWithValues: try #require(try ManifestFile.read(v2 + "/manifest.json")).blocks.map { ($0.usageID, $0) })
        for block in local.blocks where block.type == "html" {
            let folder = String(try #require(block.archive).dropLast(4))
            let page = String(decoding: TestSupport.read(courseRoot + "/" + folder + "/index.html"), as: UTF8.self)
            let named = block.sha256 == v2Entries[block.usageID]?.sha256 ? 2 : 1
            if !page.contains("version \(named)</p>") {
                #expect(verify.stdout.contains("damaged: \(block.usageID)"), "\(folder) differs from its manifest entry, unreported: \(verify.stdout)")
            }
        }
        let repair = try TestSupport.coursepack(["sync", v2, "--to", target])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(try Self.installedAsNamed(courseRoot, versions: [v1, v2]) == [2: 60])
        let clean = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!clean.stdout.contains("damaged:") && !clean.stdout.contains("missing:"), "\(clean.stdout)")
    }

    /// Each way a block folder can differ from the archive its manifest entry names is
    /// reported: a folder of another version swapped in without its entry, a file added (also
    /// one whose name holds a newline), removed, or changed at the same size, and an inventory
    /// that is not one.
    @Test func statusVerifyReportsEveryFolderThatDiffersFromItsManifestEntry() throws {
        let (v1, v2) = try Self.twoVersions(blocks: 8, padding: 100)
        let target = TestSupport.temporaryFolder("verify") + "/device"
        let other = TestSupport.temporaryFolder("verify") + "/other"
        #expect(try TestSupport.coursepack(["sync", v1, "--to", target]).status == 0)
        #expect(try TestSupport.coursepack(["sync", v2, "--to", other]).status == 0)
        let course = target + Self.courseFolder
        let manifest = try #require(try ManifestFile.read(course + "/manifest.json"))
        func id(_ block: Int) throws -> String { try #require(manifest.blocks.first { $0.archive == "html/b\(block).zip" }).usageID }
        let fm = FileManager.default
        // A version swapped in without its manifest entry (what a sync stopped after the swap leaves).
        try fm.removeItem(atPath: course + "/html/b0")
        try fm.copyItem(atPath: other + Self.courseFolder + "/html/b0", toPath: course + "/html/b0")
        try TestSupport.write(["html/b1/extra.js": "alert(1)", "html/b2/static/a\nb.css": "x"], under: course)
        try fm.createDirectory(atPath: course + "/html/b3/empty", withIntermediateDirectories: true)
        try fm.removeItem(atPath: course + "/html/b4/index.html")
        var page = TestSupport.read(course + "/html/b5/index.html")
        page[page.count / 2] ^= 0x01
        try TestSupport.writeBytes(page, to: course + "/html/b5/index.html")
        let inventories = course + "/.coursepack-sync/files"
        let b6 = try #require(try fm.contentsOfDirectory(atPath: inventories).first { $0.hasPrefix("html_b6.") })
        try TestSupport.write([b6: "index.html\n"], under: inventories)
        // The search index's folder is checked like a block's.
        let search = String(try #require(manifest.search).archive.dropLast(4))
        try TestSupport.write([search + "/planted.js": "x"], under: course)

        let read = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(read.status == 0, "\(read.stderr)")
        for (block, reason) in [(0, "index.html"), (1, "extra.js was not installed with it"), (2, "was not installed with it"),
                                (3, "empty was not installed with it"), (4, "index.html is missing"),
                                (5, "index.html does not hold the bytes it was installed with"), (6, "cannot be read")] {
            let prefix = "damaged: \(try id(block)): "
            #expect(read.stdout.contains(prefix), "block \(block): \(read.stdout)")
            let line = read.stdout.split(separator: "\n").first { $0.contains(prefix) } ?? ""
            #expect(line.contains(reason), "block \(block): \(line)")
        }
        #expect(!read.stdout.contains("damaged: \(try id(7))"), "an untouched block is not reported")
        #expect(read.stdout.contains("damaged: \(search): planted.js was not installed with it"), "\(read.stdout)")
        // Without reading bytes, everything but the same-size change is found.
        let quick = try TestSupport.coursepack(["status", target, "--blocks"])
        #expect(!quick.stdout.contains("damaged: \(try id(5))"))
        for block in [0, 1, 2, 3, 4, 6] { #expect(quick.stdout.contains("damaged: \(try id(block))"), "\(quick.stdout)") }

        let repair = try TestSupport.coursepack(["sync", v1, "--to", target])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(try Self.installedAsNamed(course, versions: [v1, v2]) == [1: 8])
        let clean = try TestSupport.coursepack(["status", target, "--verify"])
        #expect(!clean.stdout.contains("damaged:") && !clean.stdout.contains("missing:"), "\(clean.stdout)")
    }
}
