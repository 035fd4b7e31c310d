import FuzzDriver
import Foundation
import SyncClient

let folder = NSTemporaryDirectory() + "/coursepack-fuzz-outbox-\(getpid())"

/// Any bytes as an outbox journal (a crash may cut it anywhere, a host may write anything):
/// read as the answers its whole lines hold, in timestamp order, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let outbox = Outbox(folder: folder)
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    FileManager.default.createFile(atPath: outbox.path, contents: Data(bytes: data, count: size))
    let entries = outbox.entries()
    precondition(Set(entries.map(\.id)).count == entries.count)
    precondition(zip(entries, entries.dropFirst()).allSatisfy { ($0.timestamp, $0.id) < ($1.timestamp, $1.id) })
    return 0
}

@_cdecl("FuzzOutbox_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
