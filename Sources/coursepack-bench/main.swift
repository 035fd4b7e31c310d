// Micro-benchmarks for `make bench`: one component alone, timed in-process.
//   coursepack-bench zip TREE OUT.zip     the ZIP writer on a whole folder
//   coursepack-bench rewrite FILE...      the HTML link scanner and rewriter over pages
//   coursepack-bench floor MEDIA TEXT_DIR SCRATCH [ROUNDS]   (MEDIA: a folder or a list of files)
//                                          the machine's floor: read, kernel copy, SHA-256 and
//                                          CRC-32 of the media files, deflate (level 6) of the text
//   coursepack-bench property EDITS       the incremental-build property (IncrementalCheck) with
//                                          EDITS random edits, in this optimized build
import Foundation
import IncrementalCheck
import LinkRewriter
import ZipArchive

func files(under root: String) -> [String] {
    var result: [String] = []
    let enumerator = FileManager.default.enumerator(atPath: root)
    while let path = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
            result.append(path)
        }
    }
    return result
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "zip" where arguments.count == 3:
    let root = arguments[1]
    let names = files(under: root)
    let started = Date()
    do {
        let size = try ZipWriter().write(names.map { ZipEntry(name: $0, source: .file(path: root + "/" + $0)) }, to: arguments[2])
        let seconds = Date().timeIntervalSince(started)
        print("{\"entries\": \(names.count), \"bytes\": \(size), \"seconds\": \(seconds)}")
    } catch {
        fail("\(error)")
    }
case "rewrite" where arguments.count >= 2:
    let pages = arguments.dropFirst().map { FileManager.default.contents(atPath: $0).map { [UInt8]($0) } ?? [] }
    let total = pages.reduce(0) { $0 + $1.count }
    var references = 0
    var output = 0
    let started = Date()
    var rounds = 0
    repeat {
        for page in pages {
            let found = LinkRewriter.references(in: page, as: .html)
            references += found.count
            output += LinkRewriter.rewrite(page, references: found) { reference in
                if case .asset(let name, let suffix) = LinkTarget.classify(reference.url) {
                    return .replace("static/" + PercentEncoding.encodePath(name) + suffix)
                }
                return .keep
            }.count
        }
        rounds += 1
    } while Date().timeIntervalSince(started) < 2
    let seconds = Date().timeIntervalSince(started)
    print("{\"bytes\": \(total * rounds), \"references\": \(references), \"seconds\": \(seconds), \"output_bytes\": \(output)}")
case "floor" where arguments.count == 4 || arguments.count == 5:
    let rounds = arguments.count == 5 ? Int(arguments[4]) ?? 0 : 3
    guard rounds > 0 else { fail("floor: ROUNDS must be a positive number") }
    // A folder, or a file listing the media files' paths one a line (files of a course, which
    // must not be hard-linked elsewhere: coursepack refuses files with a second name).
    let listing = (try? String(contentsOfFile: arguments[1], encoding: .utf8)).map { $0.split(separator: "\n").map(String.init) }
    let media = listing ?? files(under: arguments[1]).sorted().map { arguments[1] + "/" + $0 }
    let text = files(under: arguments[2]).sorted().map { arguments[2] + "/" + $0 }
    do {
        let rates = try Floor.measure(media: media, text: text, scratch: arguments[3], level: 6, rounds: rounds)
        let report = rates.mapValues { ["bytes": Double($0.bytes), "seconds": $0.seconds, "mb_per_s": $0.mbPerSecond] }
        let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    } catch {
        fail("floor: \(error)")
    }
case "property" where arguments.count == 2:
    guard let total = Int(arguments[1]), total > 0 else { fail("property: EDITS must be a positive number, not \(arguments[1])") }
    let started = Date()
    var applied = 0
    var failures: [String] = []
    var kinds = Set<String>()
    do {
        for run in IncrementalCheck.runs(totalEdits: total) {
            let outcome = try IncrementalCheck.perform(run)
            applied += outcome.editsApplied
            kinds.formUnion(outcome.kinds)
            if let failure = outcome.failure { failures.append("\(run.course): \(failure)") }
        }
    } catch {
        fail("property: \(error)")
    }
    let report: [String: Any] = [
        "edits": applied, "passed": failures.isEmpty, "failures": failures, "kinds": kinds.sorted(),
        "seconds": Date().timeIntervalSince(started),
    ]
    let json = (try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])) ?? Data()
    print(String(decoding: json, as: UTF8.self))
    exit(failures.isEmpty ? 0 : 1)
default:
    fail("usage: coursepack-bench zip TREE OUT.zip | coursepack-bench rewrite FILE... | coursepack-bench floor MEDIA TEXT_DIR SCRATCH [ROUNDS] | coursepack-bench property EDITS")
}
