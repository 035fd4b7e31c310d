import ArgumentParser
import CommandLineSupport

/// The network half of the `coursepack` CLI: `coursepack sync` and `coursepack diff` run here
/// (see NetworkCommand in coursepack), so only this program links the HTTP stack; so do the
/// other client commands (`status`, `open`, `serve`, which links the HTTP server).
@main
struct CoursepackSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coursepack",
        abstract: "Sync, inspect and serve a device folder of published courses, or compare two manifests.",
        subcommands: [Diff.self, Sync.self, Status.self, Open.self, Serve.self])

    static func main() async {
        await runAsRoot(Array(CommandLine.arguments.dropFirst()))
    }
}
