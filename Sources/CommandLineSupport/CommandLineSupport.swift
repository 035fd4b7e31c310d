import ArgumentParser
import Diagnostics
import Foundation
import SafeText

// What every coursepack executable shares: exit statuses, how errors end a command, and the
// progress line.

public enum ExitStatus {
    public static let ok: Int32 = 0
    public static let blocksFailed: Int32 = 1
    public static let badInput: Int32 = 2
}

extension ParsableCommand {
    /// Parses the command line and runs the command. Usage errors exit with 2 (ArgumentParser's
    /// default is 64), as the README documents.
    public static func runAsRoot(_ arguments: [String]? = nil) async -> Never {
        do {
            var command = try parseAsRoot(arguments)
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            Foundation.exit(ExitStatus.ok)
        } catch {
            let code = exitCode(for: error)
            if code == .success || error is ExitCode { exit(withError: error) }
            var message = fullMessage(for: error)
            if code == .validationFailure, message.hasPrefix("Error: ") {
                message = "error[\(DiagnosticID.badUsage.code)]: " + message.dropFirst("Error: ".count)
            }
            printError(message)
            Foundation.exit(code == .validationFailure ? ExitStatus.badInput : code.rawValue)
        }
    }
}

/// Runs `body`; an error it throws is printed and ends the command with status 2 (the input
/// cannot be used; nothing was changed). `cleanup` runs first, to clear a progress line.
public func orExitBadInput<T>(cleanup: () -> Void = {}, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        cleanup()
        printError("\(DiagnosticID.label("error", for: error)): \(error)")
        throw ExitCode(ExitStatus.badInput)
    }
}

public func orExitBadInput<T>(cleanup: () -> Void = {}, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        cleanup()
        printError("\(DiagnosticID.label("error", for: error)): \(error)")
        throw ExitCode(ExitStatus.badInput)
    }
}

/// Prints to standard error, where diagnostics belong. Messages name files, ids and values from
/// course content, servers and the LMS: no control character of theirs reaches the terminal.
public func printError(_ message: String) {
    FileHandle.standardError.write(Data((RemoteText.printable(message) + "\n").utf8))
}

/// Prints a line of a command's output to standard output, cleaned as `printError` cleans.
public func printOutput(_ text: String) {
    print(RemoteText.printable(text))
}

/// A one-line progress bar on a terminal; nothing otherwise (CI logs get the summary).
public struct ProgressLine: Sendable {
    let enabled: Bool

    public init(enabled: Bool) {
        self.enabled = enabled
    }

    public func update(_ done: Int, of total: Int) {
        guard enabled, total > 0 else { return }
        let width = 30
        let filled = done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) blocks".utf8))
    }

    public func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

/// Replaces this process with the program `name` installed beside it, with the same arguments
/// (so the same exit status). Commands that link large libraries (the HTTP stack, the HTTP
/// server, SQLite) live in their own programs, so the others start fast and build fast.
public func runHelper(_ name: String, _ arguments: [String]) -> Never {
    let executable = Bundle.main.executablePath.map { ($0 as NSString).resolvingSymlinksInPath } ?? CommandLine.arguments[0]
    let helper = (executable as NSString).deletingLastPathComponent + "/" + name
    // argv[0] is the name this program was called by, so the helper's usage and help name the
    // command the user typed (`coursepack sync`), not the helper (see `invokedName`).
    let argv = ([invokedName] + arguments).map { strdup($0) } + [nil]
    execv(helper, argv)
    printError("error: `coursepack \(arguments.first ?? "")` runs \(helper), which cannot be started: \(String(cString: strerror(errno))); install \(name) beside coursepack")
    exit(ExitStatus.badInput)
}

/// The name this program was called by (`coursepack`, `coursepack-sync`): what its usage
/// and help show. A helper started by `runHelper` gets its caller's name.
public var invokedName: String {
    CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent } ?? "coursepack"
}

/// The helper program that runs the command `arguments` ask for (or its help), if `helpers`
/// names one for it: `helpers` maps program names to the command names they run.
public func helperProgram(for arguments: [String], among helpers: [String: [String]]) -> String? {
    guard var command = arguments.first else { return nil }
    if command == "help", arguments.count > 1 { command = arguments[1] }
    return helpers.first { $0.value.contains(command) }?.key
}
