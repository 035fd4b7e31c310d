import ArgumentParser
import CommandLineSupport
import Foundation
import Manifest
import ClientTarget
import SyncClient

struct Answers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the answers given offline in TARGET and their state, or record one (--add).")

    @Argument(help: "A folder kept by `coursepack sync`.")
    var target: String

    @Option(name: .long, help: "Record the answer in FILE (- for standard input): the JSON a page posts, {usage_id, timestamp, fields[, content_hash, id]}.")
    var add: String?

    @Flag(name: .long, help: "Print the answers as JSON.")
    var json = false

    func run() throws {
        let clientTarget = ClientTarget(root: target)
        let courses = try orExitBadInput { try clientTarget.courseRoots() }
        if let add {
            let data = add == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: add)
            do {
                let entry = try clientTarget.recordAnswer(data ?? Data())
                print("recorded \(entry.id) for \(entry.usageID)")
            } catch {
                printError("error: \(add): \(error)")
                throw ExitCode(ExitStatus.badInput)
            }
            return
        }
        // Each course keeps its own outbox, in its course folder.
        let entries = courses.flatMap { Outbox(folder: SyncClient.stateFolder(of: $0.root)).entries() }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: (try? encoder.encode(entries)) ?? Data("[]".utf8), as: UTF8.self))
            return
        }
        for entry in entries {
            print("\(entry.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(entry.timestamp)  \(entry.usageID)  \(entry.fields.count) fields\(entry.message.map { "  (\($0))" } ?? "")")
        }
        let counts = Dictionary(grouping: entries, by: \.state).mapValues(\.count)
        print("\(entries.count) answers: " + ["pending", "sending", "sent", "conflict", "rejected"].map { "\(counts[AnswerEntry.State(rawValue: $0)!] ?? 0) \($0)" }.joined(separator: ", "))
    }
}
