import ArgumentParser
import CommandLineSupport
import Foundation
import OfflineSearch

struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Search the courses of a synced folder offline: ranked blocks with a snippet and their page.",
        discussion: """
            Words match anywhere in a block (all must be there); "words in quotes" match as a phrase. \
            Accents and case are ignored. Exit codes: 0 (results or none); 2 for an empty query, one of \
            only common words, an unknown course, or a damaged index (named; the next sync repairs it).
            """)

    @OptionGroup var folder: TargetFolder

    @Argument(help: "What to find; quote a phrase inside it (\"'\\\"binary search\\\" tree'\").")
    var query: String

    @Option(name: .long, help: "Search only this course (its id or folder name).")
    var course: String?

    @Option(name: .long, help: "At most this many results.")
    var limit = 20

    @Flag(name: .long, help: "Print the results as JSON.")
    var json = false

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let clientTarget = try existingTarget(folder.target)
        let results = try orExitBadInput { try TargetSearch(target: clientTarget).search(query, course: course, limit: limit) }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(SearchOutput(query: query, results: results))
            printOutput(String(decoding: data, as: UTF8.self))
            return
        }
        if results.isEmpty { printOutput("no blocks match \(query)") }
        for (number, result) in results.enumerated() {
            let where_ = result.path.isEmpty ? "" : "  (" + result.path.joined(separator: " › ") + ")"
            printOutput("\(number + 1). \(result.title.isEmpty ? result.type : result.title)\(where_)")
            switch result.state {
            case "installed": printOutput("   \(result.page ?? "")")
            case "not_installed": printOutput("   not on this device: \(result.usageID)")
            default: printOutput("   online only: \(result.usageID)")
            }
            if !result.snippet.isEmpty { printOutput("   \(result.snippet)") }
        }
    }
}

struct SearchOutput: Encodable {
    var query: String
    var results: [SearchResult]
}
