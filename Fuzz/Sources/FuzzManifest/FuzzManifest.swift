import FuzzDriver
import Foundation
import SyncClient

/// Any bytes as a server's manifest: accepted only when every archive installs into its own
/// `<type>/<name>` folder, else refused with an error, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let manifest = try? ManifestLoader.validated(Data(bytes: data, count: size), shown: "fuzz/manifest.json") else { return 0 }
    var folders = Set<String>()
    for block in manifest.blocks where block.offline != false {
        guard let archive = block.archive else { continue }
        let parts = archive.dropLast(4).split(separator: "/", omittingEmptySubsequences: false)
        precondition(archive.hasSuffix(".zip") && parts.count == 2)
        precondition(!parts.contains { $0.isEmpty || $0 == ".." || $0.hasPrefix(".") })
        precondition(folders.insert(archive.lowercased()).inserted)
    }
    return 0
}

@_cdecl("FuzzManifest_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
