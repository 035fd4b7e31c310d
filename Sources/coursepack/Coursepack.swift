import ArgumentParser
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
        subcommands: [Build.self, Inspect.self, Verify.self, Diff.self, Sync.self, Status.self])

    /// Usage errors exit with 2 (ArgumentParser's default is 64), as the README documents.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .success || error is ExitCode { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(code == .validationFailure ? ExitStatus.badInput : code.rawValue)
        }
    }
}

enum ExitStatus {
    static let ok: Int32 = 0
    static let blocksFailed: Int32 = 1
    static let badInput: Int32 = 2
}

/// Runs `body`; an error it throws is printed and ends the command with status 2 (the input
/// cannot be used; nothing was changed). `cleanup` runs first, to clear a progress line.
func orExitBadInput<T>(cleanup: () -> Void = {}, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        cleanup()
        printError("error: \(error)")
        throw ExitCode(ExitStatus.badInput)
    }
}

func orExitBadInput<T>(cleanup: () -> Void = {}, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        cleanup()
        printError("error: \(error)")
        throw ExitCode(ExitStatus.badInput)
    }
}

/// Prints to standard error, where diagnostics belong.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
