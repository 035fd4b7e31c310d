import ArgumentParser
import CommandLineSupport

/// The network half of the `coursepack` CLI: `coursepack sync`, `diff` and `publish` run here
/// (see NetworkCommand in coursepack), so only this program links the HTTP stack.
@main
struct CoursepackSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coursepack",
        abstract: "Sync a device folder with a published course, compare two manifests, publish a built folder, or list offline answers.",
        subcommands: [Diff.self, Sync.self, Publish.self, Answers.self])

    static func main() async {
        await runAsRoot(Array(CommandLine.arguments.dropFirst()))
    }
}
