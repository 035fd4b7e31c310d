import ArgumentParser
import CommandLineSupport
import Foundation
import Packager

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that DIR/manifest-index.json and every part it names match (and assemble DIR/manifest.json when it is there), and that every archive and course file the manifest names exists, matches its size and sha256, and opens.")

    @Argument(help: "A published folder (holding manifest-index.json, and manifest.json while it fits the clients' limit).")
    var folder: String

    func run() throws {
        let result = try orExitBadInput { try PublishVerifier.verify(folder: folder) }
        for problem in result.problems { printError("\(problem.label("error")): \(problem)") }
        printOutput("coursepack: \(result.manifest.courseID): \(result.partsChecked) manifest parts, \(result.archivesChecked) archives and \(result.contentsChecked) course files checked, \(result.problems.count) problems")
        if !result.problems.isEmpty { throw ExitCode(ExitStatus.blocksFailed) }
    }
}
