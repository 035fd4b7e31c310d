import ArgumentParser
import CommandLineSupport
import Foundation
import Packager

@main
struct Coursepack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coursepack",
        abstract: "Turns a published Open edX course export into offline bundles and a manifest.",
        discussion: """
            Exit codes: 0 ok; 1 some blocks failed, or warnings under --strict; 2 bad usage or \
            unreadable input (nothing changed).
            """,
        version: Version.current,
        subcommands: [
            Build.self, Inspect.self, Verify.self, NetworkCommand.Diff.self, NetworkCommand.Sync.self, NetworkCommand.Publish.self,
            NetworkCommand.Answers.self, NetworkCommand.Status.self, NetworkCommand.Open.self, DeviceCommand.Serve.self, DeviceCommand.Search.self,
        ])

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        NetworkCommand.forwardIfRequested(arguments)
        await runAsRoot(arguments)
    }
}
