import FuzzDriver
import CourseExport

/// Any bytes as an OLX file: parsed or refused with an error, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let root = try? XMLTree.parse(bytes) {
        _ = root.text
        _ = root.childElements.map { $0.attribute("url_name") }
        precondition(root.contentRange.upperBound <= bytes.count)
    }
    return 0
}

@_cdecl("FuzzOLX_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
