import ArgumentParser
import ClientTarget
import CommandLineSupport
import Foundation
import SafeText

/// A target that is not one is bad input: exit 2, nothing touched.
func existingTarget(_ path: String) throws -> ClientTarget {
    try orExitBadInput { try ClientTarget(root: path).existing() }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the courses of a synced folder: blocks present, bytes on disk, pins and last use, and the storage budget.")

    @OptionGroup var folder: TargetFolder

    @Flag(name: .long, help: "One line per block too: present, missing, damaged, not downloaded or online only; size, pinned, last use.")
    var blocks = false

    @Flag(name: .long, help: "Read every installed file to find blocks changed in place too (otherwise only missing files and changed sizes are found).")
    var verify = false

    func run() throws {
        let clientTarget = try existingTarget(folder.target)
        let report = try orExitBadInput { try clientTarget.status(readingBytes: verify) }
        for course in report.courses {
            printOutput("course \(course.folder)  \(course.courseID)  \(course.title)")
            if blocks {
                for block in course.blocks {
                    let state: String
                    switch block.damage {
                    case .missing?: state = "missing "
                    case .damaged?: state = "damaged "
                    case nil: state = block.present ? "present " : (block.offline ? "absent  " : "online  ")
                    }
                    let used = block.lastUse.map { "  last use \(Self.time($0))" } ?? ""
                    printOutput("  \(state)  \(block.type)  \(block.present ? "\(block.bytes) bytes" : "-")\(block.pinned ? "  pinned" : "")\(used)  \(block.displayName)")
                }
            }
            let pins = course.pins.isEmpty ? "none" : course.pins.joined(separator: " ")
            let last = course.lastUse.map(Self.time) ?? "never"
            printOutput("  \(course.presentBlocks) blocks present of \(course.offlineBlocks) offline, \(course.bytes) bytes on disk, pins: \(pins), last use: \(last), published \(course.publishedAt)")
            if let problem = course.manifestProblem {
                printOutput("  damaged: manifest.json: \(RemoteText.clean(problem, limit: 500)); the next sync repairs it")
            }
            for block in course.blocks {
                switch block.damage {
                case .missing?: printOutput("  missing: \(block.usageID): its folder is gone; the next sync downloads it again")
                case .damaged(let reason)?: printOutput("  damaged: \(block.usageID): \(reason); the next sync downloads it again")
                case nil: break
                }
            }
            for (folder, damage) in course.sharedDamage {
                switch damage {
                case .missing: printOutput("  missing: \(folder): its folder is gone; the next sync downloads it again")
                case .damaged(let reason): printOutput("  damaged: \(folder): \(reason); the next sync downloads it again")
                }
            }
            for leftover in course.leftovers { printOutput("  leftover: \(leftover): left by a sync that was killed; the next sync removes it") }
        }
        let budget = report.budget.map { "\($0) bytes" } ?? "none"
        let usage = report.usage
        printOutput("disk: blocks \(usage.blocks), shared files \(usage.sharedFiles), runtime \(usage.runtime), search \(usage.search), outline pages \(usage.outlinePages), state \(usage.state) bytes")
        let expiry = report.expireAfter.map { ", expire after \(Self.period($0))" } ?? ""
        printOutput("\(report.courses.count) course\(report.courses.count == 1 ? "" : "s"), \(report.bytes) bytes on disk, budget: \(budget)\(expiry)")
    }

    static func period(_ seconds: Double) -> String {
        seconds.truncatingRemainder(dividingBy: 86_400) == 0 ? "\(Int(seconds / 86_400))d" : "\(Int(seconds))s"
    }

    static func time(_ seconds: Double) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds))
    }
}

struct Open: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the page of BLOCK in TARGET and record that it was opened (recently opened blocks are evicted last).")

    @OptionGroup var folder: TargetFolder

    @Argument(help: "The block's usage id.")
    var block: String

    func run() throws {
        let clientTarget = try existingTarget(folder.target)
        let path = try orExitBadInput { try clientTarget.markOpened(block) }
        printOutput(path)
    }
}
