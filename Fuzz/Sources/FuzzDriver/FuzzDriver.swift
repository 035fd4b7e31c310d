@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// SwiftPM links each executable target's entry point as `<Target>_main`, so libFuzzer's own
/// `main` is not used; each target's entry point hands control to libFuzzer's driver here.
public func runLibFuzzer(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, callback)
}
