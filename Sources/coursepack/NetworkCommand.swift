import ArgumentParser
import CommandLineSupport
import Foundation

/// `sync`, `diff` and `publish` (which talk HTTP), and the client commands beside them
/// (`answers`, `status`, `open`, `search`, `serve`), run in `coursepack-sync`, installed
/// beside `coursepack`. Only that program links the HTTP stack (FoundationNetworking, libcurl
/// and the dozens of libraries it loads) and the HTTP server, so `build`, `verify` and `inspect`
/// start in a third of the time and run where libcurl is not installed.
enum NetworkCommand {
    static let helperName = "coursepack-sync"

    /// Whether `arguments` ask for a command of the helper (`sync`, `diff`, `publish`, `answers`,
    /// `status`, `open`, `search`, `serve`) or its help.
    static func isRequested(by arguments: [String]) -> Bool {
        let commands: [any ParsableCommand.Type] = [Sync.self, Diff.self, Publish.self, Answers.self, Status.self, Open.self, Serve.self, Search.self]
        let names = commands.compactMap { $0.configuration.commandName }
        guard let first = arguments.first else { return false }
        return names.contains(first) || (first == "help" && arguments.count > 1 && names.contains(arguments[1]))
    }

    /// Replaces this process with the helper: same arguments, same exit status.
    static func forward(_ arguments: [String]) -> Never {
        let executable = Bundle.main.executablePath.map { ($0 as NSString).resolvingSymlinksInPath } ?? CommandLine.arguments[0]
        let helper = (executable as NSString).deletingLastPathComponent + "/" + helperName
        let argv = ([helper] + arguments).map { strdup($0) } + [nil]
        execv(helper, argv)
        printError("error: `coursepack \(arguments[0])` runs \(helper), which cannot be started: \(String(cString: strerror(errno))); install \(helperName) beside coursepack")
        exit(ExitStatus.badInput)
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

    // The client's other commands read or serve a synced folder; they live with `sync`.
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "List the courses of a synced folder: blocks present, bytes on disk, pins and last use, and the storage budget.")
    }

    struct Open: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "open", abstract: "Print the page of BLOCK in TARGET and record that it was opened.")
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search", abstract: "Search the courses of a synced folder offline: ranked blocks with a snippet and their page.")
    }

    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve", abstract: "Serve a synced folder over HTTP (course list and outlines at /, Range for video).")
    }

    struct Publish: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Publish a built folder to S3-compatible storage or a web root: archives first, manifest last, removed archives after a grace period.")
    }
}
