import ArgumentParser
import CommandLineSupport

/// The network half of the `coursepack` CLI: `coursepack sync`, `diff` and `publish` run here
/// (see NetworkCommand in coursepack), so only this program links the HTTP stack; so do the
/// client commands `answers`, `status` and `open`. `serve` and `search` run in
/// `coursepack-device`, which this program hands them to.
@main
struct CoursepackSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coursepack",
        abstract: "Sync and inspect a device folder of published courses, compare two manifests, publish a built folder, or list offline answers.",
        subcommands: [Diff.self, Sync.self, Publish.self, Answers.self, Status.self, Open.self, DeviceCommand.Serve.self, DeviceCommand.Search.self])

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let helper = helperProgram(for: arguments, among: DeviceCommand.helpers) { runHelper(helper, arguments) }
        await runAsRoot(arguments)
    }
}

/// `serve` and `search`, listed in this program's help and run by `coursepack-device`.
enum DeviceCommand {
    static let helpers: [String: [String]] = [
        "coursepack-device": ([Serve.self, Search.self] as [any ParsableCommand.Type]).compactMap { $0.configuration.commandName }
    ]

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search", abstract: "Search the courses of a synced folder offline: ranked blocks with a snippet and their page.")
    }

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve", abstract: "Serve a synced folder over HTTP (course list and outlines at /, Range for video).")
    }
}
