import FileSystem
import Foundation
import Testing
import TestSupport

/// Files read whole are checked first: a regular file, no larger than its limit.
@Suite struct WholeFileTests {
    @Test func aFileOverItsLimitIsRefusedUnreadAndAMissingOneIsNil() throws {
        let folder = TestSupport.temporaryFolder("whole-file")
        let path = folder + "/sparse"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)))
        #expect(try WholeFile.read(path, atMost: 2) == Array("{}".utf8))
        #expect(truncate(path, 10 << 30) == 0, "a sparse 10 GiB file")
        let error = #expect(throws: FileError.self) { _ = try WholeFile.read(path, atMost: WholeFile.manifestLimit) }
        #expect(error?.errno == WholeFile.tooLargeErrno)
        #expect(error?.description.contains(path) == true && error?.description.contains("refused unread") == true, "\(String(describing: error))")
        #expect(WholeFile.readIfUsable(path, atMost: WholeFile.stateLimit) == nil)
        #expect(try WholeFile.read(folder + "/none", atMost: 10) == nil)
        #expect(try WholeFile.read(folder + "/none/deeper", atMost: 10) == nil)
    }

    @Test func aFIFOOrAFolderIsRefusedNeverWaitedOn() throws {
        let folder = TestSupport.temporaryFolder("whole-file")
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        #expect(throws: FileError.self) { _ = try WholeFile.read(folder + "/fifo", atMost: 10) }
        #expect(throws: FileError.self) { _ = try WholeFile.read(folder, atMost: 10) }
    }
}
