import ArgumentParser
import CommandLineSupport
import Foundation
import Manifest
import SyncClient

struct Diff: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two manifests (files, published folders or URLs): added, changed, removed blocks and bytes to download.")

    @Argument(help: "The older manifest: manifest.json, its folder, or an http(s) URL.")
    var old: String

    @Argument(help: "The newer manifest.")
    var new: String

    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var network: NetworkFlags

    func validate() throws { try network.validate() }

    func run() async throws {
        // Checked as a sync checks what it reads: either side may come from anywhere.
        let before = try await orExitBadInput { try await SyncClient.serverManifest(SyncSource(old), timeouts: network.timeouts) }
        let after = try await orExitBadInput { try await SyncClient.serverManifest(SyncSource(new), timeouts: network.timeouts) }
        let diff = ManifestDiff(old: before, new: after)
        if json {
            let object: [String: Any] = [
                "added": diff.added.map(\.usageID),
                "changed": diff.changed.map(\.usageID),
                "removed": diff.removed.map(\.usageID),
                "unchanged": diff.unchanged.count,
                "bytes_to_download": diff.bytesToDownload,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            printOutput(String(decoding: data, as: UTF8.self))
            return
        }
        for (label, blocks) in [("added", diff.added), ("changed", diff.changed), ("removed", diff.removed)] {
            for block in blocks {
                printOutput("\(label)  \(block.usageID)  \(block.displayName ?? "")  \(block.size.map { "\($0) bytes" } ?? "")")
            }
        }
        printOutput("\(diff.added.count) added, \(diff.changed.count) changed, \(diff.removed.count) removed, \(diff.unchanged.count) unchanged; \(diff.bytesToDownload) bytes to download")
    }
}
