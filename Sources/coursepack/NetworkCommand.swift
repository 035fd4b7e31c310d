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
        "coursepack-sync": [Sync.name, Diff.name, Publish.name, Answers.name, Status.name, Open.name],
        "coursepack-device": DeviceCommand.names,
    ]

    /// Replaces this process with the helper that runs the command `arguments` ask for, if one does.
    static func forwardIfRequested(_ arguments: [String]) {
        if let helper = helperProgram(for: arguments, among: helpers) { runHelper(helper, arguments) }
    }

    /// What `coursepack --help` says of each command `coursepack-sync` runs.
    static let abstracts: [String: String] = [
        "sync": "Bring a course in TARGET up to date with its published folder or URL: download only new and outdated blocks, within the target's storage budget.",
        "answers": "List the answers given offline in TARGET and their state, or record one (--add).",
        "diff": "Compare two manifests (files, published folders or URLs): added, changed, removed blocks and bytes to download.",
        "status": "List the courses of a synced folder: blocks present, bytes on disk, pins and last use, and the storage budget.",
        "open": "Print the page of BLOCK in TARGET and record that it was opened.",
        "publish": "Publish a built folder to S3-compatible storage or a web root: archives first, manifest last, removed archives after a grace period.",
    ]

    // Listed in `coursepack --help`; `main` hands them to the helper before they are parsed.
    struct Sync: HelperCommand { static let name = "sync" }
    struct Answers: HelperCommand { static let name = "answers" }
    struct Diff: HelperCommand { static let name = "diff" }
    // The client's other commands read a synced folder; they live with `sync`.
    struct Status: HelperCommand { static let name = "status" }
    struct Open: HelperCommand { static let name = "open" }
    struct Publish: HelperCommand { static let name = "publish" }
}

/// A command only listed here: `coursepack-sync` declares its arguments and runs it.
protocol HelperCommand: ParsableCommand {
    static var name: String { get }
}

extension HelperCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: name, abstract: NetworkCommand.abstracts[name] ?? "")
    }
}
