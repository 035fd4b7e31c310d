import ArgumentParser
import CommandLineSupport
import Foundation

/// `sync`, `diff` and `publish` (which talk HTTP), and the client commands beside them
/// (`answers`, `status`, `open`), run in `coursepack-sync`; `serve` and `search`, which read a
/// synced folder with an HTTP server and SQLite, run in `coursepack-device`. Both are installed
/// beside `coursepack`. Only they link those stacks (FoundationNetworking, libcurl and the
/// dozens of libraries it loads; SwiftNIO; GRDB), so `build`, `verify` and `inspect` start in a
/// third of the time and run where libcurl is not installed, and a CI job that publishes builds
/// `coursepack-sync` without the server's minutes of compiling.
enum NetworkCommand {
    static let helpers: [String: [String]] = [
        "coursepack-sync": names([Sync.self, Diff.self, Publish.self, Answers.self, Status.self, Open.self]),
        "coursepack-device": DeviceCommand.names,
    ]

    private static func names(_ commands: [any ParsableCommand.Type]) -> [String] {
        commands.compactMap { $0.configuration.commandName }
    }

    /// Replaces this process with the helper that runs the command `arguments` ask for, if one does.
    static func forwardIfRequested(_ arguments: [String]) {
        if let helper = helperProgram(for: arguments, among: helpers) { runHelper(helper, arguments) }
    }

    // Listed in `coursepack --help`; `main` hands them to the helper before they are parsed.
    struct Sync: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Bring a course in TARGET up to date with its published folder or URL: download only new and outdated blocks, within the target's storage budget.")
    }

    struct Answers: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "answers", abstract: "List the answers given offline in TARGET and their state, or record one (--add).")
    }

    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "diff",
            abstract: "Compare two manifests (files, published folders or URLs): added, changed, removed blocks and bytes to download.")
    }

    // The client's other commands read a synced folder; they live with `sync`.
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "List the courses of a synced folder: blocks present, bytes on disk, pins and last use, and the storage budget.")
    }

    struct Open: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "open", abstract: "Print the page of BLOCK in TARGET and record that it was opened.")
    }

    struct Publish: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Publish a built folder to S3-compatible storage or a web root: archives first, manifest last, removed archives after a grace period.")
    }
}
