// Micro-benchmarks for `make bench`: one component alone, timed in-process.
//   coursepack-bench zip TREE OUT.zip     the ZIP writer on a whole folder
//   coursepack-bench rewrite FILE...      the HTML link scanner and rewriter over pages
import Foundation
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
default:
    fail("usage: coursepack-bench zip TREE OUT.zip | coursepack-bench rewrite FILE...")
}
