import Foundation
import Testing
import TestSupport

/// The previous manifest in DIR decides what a build deletes, so it is checked as strictly as a
/// server's before anything it names is touched.
@Suite struct PreviousManifestTests {
    @Test(arguments: ["manifest.json", "html", "html/", "../outside.zip", "html/.hidden.zip", "html/sub/x.zip"])
    func aManifestNamingSomethingOtherThanAnArchiveChangesNothing(archive: String) throws {
        let out = TestSupport.temporaryFolder("previous") + "/out"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        // An attacker (or a bug) rewrites the manifest so that a removed block names `archive`.
        let path = out + "/manifest.json"
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(TestSupport.read(path))) as? [String: Any])
        var blocks = try #require(manifest["blocks"] as? [[String: Any]])
        var gone = blocks[0]
        gone["usage_id"] = "block-v1:CoursepackX+CP101+2026+type@html+block@gone"
        gone["archive"] = archive
        blocks.append(gone)
        manifest["blocks"] = blocks
        try TestSupport.writeBytes(Array(try JSONSerialization.data(withJSONObject: manifest)), to: path)
        let before = TestSupport.files(under: out)
        let state = TestSupport.files(under: out + ".coursepack-state")

        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("not of the form <type>/<name>.zip"), "\(result.stderr)")
        #expect(TestSupport.files(under: out) == before)
        #expect(TestSupport.files(under: out + ".coursepack-state") == state, "the build state is untouched too")
    }

    @Test func aManifestOfAnotherCourseChangesNothing() throws {
        let out = TestSupport.temporaryFolder("previous") + "/out"
        #expect(try TestSupport.coursepack(["build", TestSupport.demoCourse, "--out", out, "-q"]).status == 0)
        try TestSupport.write(["html/x.zip.tmp-1-2": "left by a killed build"], under: out)
        let before = TestSupport.files(under: out)
        let state = TestSupport.files(under: out + ".coursepack-state")
        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out])
        #expect(result.status == 2 && result.stderr.contains("belongs to course-v1:OpenedX+DemoX+DemoCourse"))
        #expect(TestSupport.files(under: out) == before, "not even a leftover is removed before the refusal")
        #expect(TestSupport.files(under: out + ".coursepack-state") == state)
    }

    @Test func aTypeFolderThatIsALinkIsRefused() throws {
        let root = TestSupport.temporaryFolder("previous")
        let out = root + "/out"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        let outside = root + "/elsewhere"
        try FileManager.default.moveItem(atPath: out + "/html", toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: out + "/html", withDestinationPath: outside)
        let before = TestSupport.files(under: outside)
        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out])
        #expect(result.status == 2 && result.stderr.contains("is a symbolic link"), "\(result.stderr)")
        #expect(TestSupport.files(under: outside) == before)
    }

    /// Older versions kept `DIR/.coursepack.lock`; a dangling link planted there once made the
    /// build create its target outside `DIR`. The lock is now a `flock` on `DIR` itself, and a
    /// link in the legacy file's place is refused before anything is written.
    @Test func aDanglingLockLinkInTheOutputFolderCreatesNothingOutside() throws {
        let root = TestSupport.temporaryFolder("previous")
        let out = root + "/out"
        #expect(try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"]).status == 0)
        try FileManager.default.createSymbolicLink(atPath: out + "/.coursepack.lock", withDestinationPath: root + "/created-outside")
        let before = TestSupport.files(under: out)
        let result = try TestSupport.coursepack(["build", TestSupport.exampleCourse, "--out", out, "-q"])
        #expect(result.status == 2 && result.stderr.contains(".coursepack.lock: is a symbolic link"), "\(result.status): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root + "/created-outside"))
        #expect(TestSupport.files(under: out) == before)
    }
}
