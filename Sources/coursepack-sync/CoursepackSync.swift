import ArgumentParser
import CommandLineSupport

/// The network half of the `coursepack` CLI: `coursepack sync`, `diff` and `publish` run here
/// (see NetworkCommand in coursepack), so only this program links the HTTP stack; so do the
/// client commands `answers`, `status` and `open`. `serve` and `search` run in
/// `coursepack-device`, which this program hands them to.
@main
struct CoursepackSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: invokedName,
        abstract: "Sync and inspect a device folder of published courses, compare two manifests, publish a built folder, or list offline answers.",
        subcommands: [Diff.self, Sync.self, Publish.self, Answers.self, Status.self, Open.self, DeviceCommand.Serve.self, DeviceCommand.Search.self])

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let helper = helperProgram(for: arguments, among: ["coursepack-device": DeviceCommand.names]) { runHelper(helper, arguments) }
        await runAsRoot(arguments)
    }
}
