import ArgumentParser
import Foundation
import Packager

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that every archive DIR/manifest.json names exists, matches its size and sha256, and opens.")

    @Argument(help: "A published folder (holding manifest.json).")
    var folder: String

    func run() throws {
        let result: PublishVerifier.Result
        do {
            result = try PublishVerifier.verify(folder: folder)
        } catch {
            printError("error: \(error)")
            throw ExitCode(ExitStatus.badInput)
        }
        for problem in result.problems { printError("error: \(problem)") }
        print("coursepack: \(result.manifest.courseID): \(result.archivesChecked) archives checked, \(result.problems.count) problems")
        if !result.problems.isEmpty { throw ExitCode(ExitStatus.blocksFailed) }
    }
}
