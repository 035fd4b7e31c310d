import ArgumentParser
import CommandLineSupport

/// The network half of the `coursepack` CLI: `coursepack sync`, `diff` and `publish` run here
/// (see NetworkCommand in coursepack), so only this program links the HTTP stack; so do the
/// other client commands (`answers`, `status`, `open`, `search`, and `serve`, which links the HTTP server).
@main
struct CoursepackSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coursepack",
        abstract: "Sync, inspect and serve a device folder of published courses, compare two manifests, publish a built folder, or list offline answers.",
        subcommands: [Diff.self, Sync.self, Publish.self, Answers.self, Status.self, Open.self, Serve.self, Search.self])

    static func main() async {
        await runAsRoot(Array(CommandLine.arguments.dropFirst()))
    }
}
