import ArgumentParser
import CommandLineSupport
import Foundation

/// `sync`, `diff` and `publish` (which talk HTTP) run in `coursepack-sync`, installed
/// beside `coursepack`. Only that program links the HTTP stack (FoundationNetworking, libcurl
/// and the dozens of libraries it loads), so `build`, `verify`, `inspect` and `status` start
/// in a third of the time and run where libcurl is not installed.
enum NetworkCommand {
    static let helperName = "coursepack-sync"

    /// Whether `arguments` ask for `sync …`, `diff …`, `publish …` or `help` for one of them.
    static func isRequested(by arguments: [String]) -> Bool {
        let names = [Sync.configuration.commandName, Diff.configuration.commandName, Publish.configuration.commandName, Answers.configuration.commandName]
            .compactMap { $0 }
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
            commandName: "sync", abstract: "Bring TARGET up to date with a published course: download only new and outdated blocks.")
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

    struct Publish: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Publish a built folder to S3-compatible storage or a web root: archives first, manifest last, removed archives after a grace period.")
    }
}
