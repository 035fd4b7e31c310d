import FuzzDriver
import CourseExport
import Foundation

let scratch = NSTemporaryDirectory() + "/coursepack-fuzz-targz-\(getpid())"

/// Any bytes as a course .tar.gz: unpacked safely (and removed) or refused, never a crash, and
/// nothing written outside the private temporary folder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let path = scratch + ".tar.gz"
    FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size))
    if let export = try? OpenedExport.open(path) {
        precondition(export.directory.root.hasPrefix(NSTemporaryDirectory().replacingOccurrences(of: "//", with: "/")) || export.directory.root.contains("coursepack-export-"))
        _ = try? CourseLoader.load(export.directory)
        export.close()
    }
    return 0
}

@_cdecl("FuzzTarGz_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
