import ArgumentParser
import CommandLineSupport
import Foundation
import Manifest

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show which blocks a synced folder holds and the space they take.")

    @Argument(help: "A folder kept by `coursepack sync`.")
    var target: String

    func run() throws {
        guard let manifest = try orExitBadInput({ try ManifestFile.read(target + "/manifest.json") }) else {
            printError("error: \(target): no manifest.json: nothing has been synced here")
            throw ExitCode(ExitStatus.badInput)
        }
        var total: UInt64 = 0
        var present = 0
        for block in manifest.blocks {
            guard let archive = block.archive, block.offline != false else {
                print("online    \(block.type)  \(block.displayName ?? "")  (\(block.reason ?? "needs the network"))")
                continue
            }
            let folder = target + "/" + String(archive.dropLast(4))
            let size = Self.diskUsage(folder)
            total += size ?? 0
            if size != nil { present += 1 }
            print("\(size == nil ? "missing " : "present ")  \(block.type)  \(size.map { "\($0) bytes" } ?? "-")  \(block.displayName ?? "")")
        }
        if let runtime = manifest.runtime {
            let size = Self.diskUsage(target + "/" + String(runtime.archive.dropLast(4)))
            total += size ?? 0
            print("\(size == nil ? "missing " : "present ")  runtime  \(size.map { "\($0) bytes" } ?? "-")  page runtime shared by the pages (jQuery, math)")
        }
        print("\(manifest.courseID): \(present) blocks present, \(total) bytes on disk, published \(manifest.publishedAt)")
    }

    static func diskUsage(_ folder: String) -> UInt64? {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return nil }
        var total: UInt64 = 0
        while let path = enumerator.nextObject() as? String {
            total += (try? FileManager.default.attributesOfItem(atPath: folder + "/" + path)[.size] as? UInt64) ?? 0
        }
        return total
    }
}
