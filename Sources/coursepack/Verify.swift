import ArgumentParser
import CommandLineSupport
import Foundation
import Packager

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that every archive DIR/manifest.json names exists, matches its size and sha256, and opens.")

    @Argument(help: "A published folder (holding manifest.json).")
    var folder: String

    func run() throws {
        let result = try orExitBadInput { try PublishVerifier.verify(folder: folder) }
        for problem in result.problems { printError("\(problem.label("error")): \(problem)") }
        printOutput("coursepack: \(result.manifest.courseID): \(result.archivesChecked) archives and \(result.contentsChecked) course files checked, \(result.problems.count) problems")
        if !result.problems.isEmpty { throw ExitCode(ExitStatus.blocksFailed) }
    }
}
