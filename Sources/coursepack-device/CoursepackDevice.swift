import ArgumentParser
import ClientTarget
import CommandLineSupport

/// The commands that read a synced folder with large libraries: `serve` (an HTTP server,
/// SwiftNIO) and `search` (SQLite full-text search). `coursepack serve` and `coursepack search`
/// run here (see NetworkCommand in coursepack), so neither `coursepack` nor `coursepack-sync`
/// links them.
@main
struct CoursepackDevice: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: invokedName,
        abstract: "Serve a device folder of synced courses over HTTP, or search it offline.",
        subcommands: [Serve.self, Search.self])

    static func main() async {
        await runAsRoot(Array(CommandLine.arguments.dropFirst()))
    }
}

/// A target that is not one is bad input: exit 2, nothing touched.
func existingTarget(_ path: String) throws -> ClientTarget {
    try orExitBadInput { try ClientTarget(root: path).existing() }
}
