import FuzzDriver
import Foundation
import ZipArchive

let scratch = NSTemporaryDirectory() + "/coursepack-fuzz-zip-\(getpid())"

/// Any bytes as a downloaded archive: verified and extracted, or refused, never a crash, and
/// never a file outside the extraction folder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let path = scratch + ".zip"
    let target = scratch + "-out"
    FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size))
    var limits = ZipReader.Limits()
    limits.maximumTotalSize = 64 << 20
    if let reader = try? ZipReader(path: path, limits: limits) {
        try? reader.verify()
        if (try? reader.extract(into: target)) != nil {
            ZipReader.removeTree(target)
        }
    }
    return 0
}

@_cdecl("FuzzZip_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
