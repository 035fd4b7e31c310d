import ArgumentParser
import CommandLineSupport
import CourseExport
import Diagnostics
import Foundation

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the published block tree of a course: type, url_name, display name, split test groups and group_access.")

    @OptionGroup var source: CourseSource

    @Flag(help: "Print the block tree as JSON (usage ids, types, parents, children, warnings, errors).")
    var json = false

    func run() throws {
        let (loaded, export) = try orExitBadInput { try CourseLoader.open(source.course) }
        defer { export.close() }
        if json {
            printOutput(CourseOutline(loaded).json())
            if !loaded.issues.isEmpty { throw ExitCode(ExitStatus.blocksFailed) }
            return
        }
        printOutput("\(loaded.id)  \(loaded.displayName)  (language \(loaded.language))")
        let byID = Dictionary(loaded.blocks.map { ($0.usageID, $0) }, uniquingKeysWith: { first, _ in first })
        for block in loaded.blocks.dropFirst() {
            let indent = String(repeating: "  ", count: block.parents.count)
            let parent = block.parents.first.flatMap { byID[$0] }
            let children = block.type == "split_test" ? block.children.compactMap { byID[$0] } : []
            printOutput("\(indent)\(block.type)  \(block.urlName)  \(block.displayName ?? "")" + Self.groups(of: block, parent: parent, children: children))
        }
        let leaves = loaded.blocks.filter { !$0.isContainer }
        let types = Dictionary(grouping: leaves, by: \.type).map { "\($0.value.count) \($0.key)" }.sorted()
        printOutput("\(leaves.count) leaf blocks: \(types.joined(separator: ", "))")
        for warning in loaded.warnings { printError("\(DiagnosticID.label("warning", for: warning)): \(warning.file): \(warning.message)") }
        for issue in loaded.issues { printError("\(DiagnosticID.label("error", for: issue)): \(issue.file): \(issue.message)") }
        if !loaded.issues.isEmpty { throw ExitCode(ExitStatus.blocksFailed) }
    }

    /// `[user partition 0: 2 groups (0, 1)]` on a split test, `[split_test group 1 of user
    /// partition 0]` on its children, and
    /// `[group_access 50: 1, 2]` where the block narrows who sees it.
    static func groups(of block: Block, parent: Block?, children: [Block]) -> String {
        var notes: [String] = []
        let experiment = children.compactMap(\.splitTestGroup).filter { $0.splitTest == block.usageID }
        if let partition = experiment.first?.userPartitionID {
            let groups = Set(experiment.compactMap(\.groupID)).sorted().map(String.init)
            notes.append("user partition \(partition): \(groups.count) groups (\(groups.joined(separator: ", ")))")
        }
        if let split = block.splitTestGroup, split.splitTest == parent?.usageID {
            notes.append("split_test group \(split.groupID.map(String.init) ?? "none") of user partition \(split.userPartitionID)")
        }
        if !block.groupAccess.isEmpty, block.groupAccess != parent?.groupAccess, parent?.type != "split_test" || block.attributes["group_access"] != nil {
            let partitions = block.groupAccess.keys.sorted().map { partition in
                let groups = block.groupAccess[partition] ?? []
                return "\(partition): \(groups.isEmpty ? "no group" : groups.map(String.init).joined(separator: ", "))"
            }
            notes.append("group_access \(partitions.joined(separator: "; "))")
        }
        return notes.map { "  [\($0)]" }.joined()
    }
}
