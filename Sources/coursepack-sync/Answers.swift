import ArgumentParser
import CommandLineSupport
import Diagnostics
import Foundation
import Manifest
import ClientTarget
import SyncClient
import SafeText

struct Answers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the answers given offline in TARGET and their state, or record one (--add).")

    @OptionGroup var folder: TargetFolder

    @Option(name: .long, help: "Record the answer in FILE (- for standard input): the JSON a page posts, {usage_id, timestamp, fields[, content_hash, id]}.")
    var add: String?

    @Flag(name: .long, help: "Print the answers as JSON.")
    var json = false

    func run() throws {
        let clientTarget = ClientTarget(root: folder.target)
        let courses = try orExitBadInput { try clientTarget.courseRoots() }
        if let add {
            let data = add == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: add)
            do {
                let entry = try clientTarget.recordAnswer(data ?? Data())
                printOutput("recorded \(RemoteText.clean(entry.id, limit: 200)) for \(RemoteText.clean(entry.usageID, limit: 500))")
                for failure in clientTarget.writeAnswerStates() {
                    printError("\(DiagnosticID.label("warning", for: failure)): \(RemoteText.clean("\(failure)", limit: 1000)); the answer is recorded")
                }
            } catch {
                printError("\(DiagnosticID.label("error", for: error)): \(add): \(RemoteText.clean("\(error)", limit: 1000))")
                throw ExitCode(ExitStatus.badInput)
            }
            return
        }
        // Each course keeps its own outbox, in its course folder.
        // Messages and results came from the LMS, ids and times from pages: none reaches the
        // terminal with control characters (older outboxes stored them raw). The learner's own
        // fields are printed as given; JSON escapes their C0 characters.
        let entries = courses.flatMap { Outbox(folder: SyncClient.stateFolder(of: $0.root)).entries() }.map(Self.printable)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            printOutput(String(decoding: (try? encoder.encode(entries)) ?? Data("[]".utf8), as: UTF8.self))
            return
        }
        for entry in entries {
            printOutput("\(entry.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(entry.timestamp)  \(entry.usageID)  \(entry.fields.count) fields\(entry.lmsResult.map { "  [\($0.summary)]" } ?? "")\(entry.message.map { "  (\($0))" } ?? "")")
        }
        let counts = Dictionary(grouping: entries, by: \.state).mapValues(\.count)
        printOutput("\(entries.count) answers: " + ["pending", "sending", "sent", "conflict", "rejected"].map { "\(counts[AnswerEntry.State(rawValue: $0)!] ?? 0) \($0)" }.joined(separator: ", "))
    }

    static func printable(_ entry: AnswerEntry) -> AnswerEntry {
        var clean = entry
        clean.id = RemoteText.clean(entry.id, limit: 200)
        clean.usageID = RemoteText.clean(entry.usageID, limit: 500)
        clean.timestamp = RemoteText.clean(entry.timestamp, limit: 64)
        clean.contentHash = entry.contentHash.map { RemoteText.clean($0, limit: 128) }
        clean.message = entry.message.map { RemoteText.clean($0) }
        clean.result = entry.result.map { RemoteText.clean($0, limit: 4096) }
        return clean
    }
}
