import ArgumentParser
import CommandLineSupport
import CourseExport
import Foundation

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the published block tree of a course: type, url_name, display name.")

    @Argument(help: "Course export: folder or .tar.gz.")
    var course: String

    func run() throws {
        let (loaded, export) = try orExitBadInput { try CourseLoader.open(course) }
        defer { export.close() }
        print("\(loaded.id)  \(loaded.displayName)  (language \(loaded.language))")
        for block in loaded.blocks.dropFirst() {
            let indent = String(repeating: "  ", count: block.parents.count)
            print("\(indent)\(block.type)  \(block.urlName)  \(block.displayName ?? "")")
        }
        let leaves = loaded.blocks.filter { !$0.isContainer }
        let types = Dictionary(grouping: leaves, by: \.type).map { "\($0.value.count) \($0.key)" }.sorted()
        print("\(leaves.count) leaf blocks: \(types.joined(separator: ", "))")
        for issue in loaded.issues { printError("error: \(issue.file): \(issue.message)") }
        if !loaded.issues.isEmpty { throw ExitCode(ExitStatus.blocksFailed) }
    }
}
