import Foundation
import ParallelMap

/// Walks the block tree depth first, resolving pointers (`<vertical url_name="x"/>` means
/// `vertical/x.xml`) and keeping inline definitions. A block that cannot be read becomes a
/// `CourseIssue` and is left out with its subtree; the rest of the course still loads.
struct TreeWalker {
    let directory: ExportDirectory
    let org: String
    let number: String
    let run: String
    let policy: Policy
    private(set) var blocks: [Block] = []
    private(set) var issues: [CourseIssue] = []
    /// Block files read and parsed ahead, in parallel; the walk itself stays sequential.
    var prefetched: [String: Result<([UInt8], XMLElement), CourseError>] = [:]
    private var definedBy: [String: String] = [:]
    private var visiting: Set<String> = []

    /// Tags that are never published content.
    static let unpublishedTypes: Set<String> = ["wiki"]
    /// Hard bound on pointer depth, so a cycle or absurd nesting cannot exhaust the stack.
    static let maximumDepth = 64

    init(directory: ExportDirectory, org: String, number: String, run: String, policy: Policy) {
        self.directory = directory
        self.org = org
        self.number = number
        self.run = run
        self.policy = policy
    }

    func usageID(_ type: String, _ urlName: String) -> String {
        "block-v1:\(org)+\(number)+\(run)+type@\(type)+block@\(urlName)"
    }

    mutating func visitCourse(_ definition: XMLElement, pointer: XMLElement, source: [UInt8], file: String) {
        let resolved = Resolved(definition: definition, source: source, file: file,
                                attributes: merge(definition.attributes, pointer.attributes))
        add(type: "course", urlName: run, resolved: resolved, parents: [])
    }

    private struct Resolved {
        let definition: XMLElement
        let source: [UInt8]
        let file: String
        let attributes: [String: String]
    }

    private mutating func visit(_ element: XMLElement, index: Int, source: [UInt8], file: String, parents: [String]) -> String? {
        let type = element.name
        if Self.unpublishedTypes.contains(type) { return nil }
        let parent = parents.first ?? ""
        guard parents.count < Self.maximumDepth else {
            issues.append(CourseIssue(usageID: nil, file: file, message: "blocks nested deeper than \(Self.maximumDepth) levels under \(parent)"))
            return nil
        }
        let urlName: String
        if let given = element.attribute("url_name") {
            if let problem = Self.problemWithURLName(given) {
                issues.append(CourseIssue(usageID: nil, file: file, message: "<\(type) url_name=\"\(given)\">: \(problem)"))
                return nil
            }
            urlName = given
        } else {
            urlName = Self.generatedURLName(parent: parent, type: type, index: index)
        }
        let id = usageID(type, urlName)

        let resolved: Resolved
        let isPointer = element.attribute("url_name") != nil && element.childElements.isEmpty
        let pointerFile = "\(type)/\(urlName.contains(":") ? urlName.split(separator: ":", omittingEmptySubsequences: false).joined(separator: "/") : urlName).xml"
        // A prefetched file exists (even one that failed to parse); only others need a look.
        if isPointer && (prefetched[pointerFile] != nil || directory.exists(pointerFile)) {
            guard !visiting.contains(pointerFile) else {
                issues.append(CourseIssue(usageID: id, file: pointerFile, message: "pointer cycle: \(pointerFile) includes itself"))
                return nil
            }
            do {
                let (bytes, parsed) = try prefetched[pointerFile]?.get() ?? Self.readAndParse(directory, pointerFile)
                let definition = parsed
                guard definition.name == type else {
                    throw CourseError.invalid(path: pointerFile, reason: "root element is <\(definition.name)>, expected <\(type)>")
                }
                resolved = Resolved(definition: definition, source: bytes, file: pointerFile,
                                    attributes: merge(definition.attributes, element.attributes))
            } catch {
                issues.append(CourseIssue(usageID: id, file: pointerFile, message: "\(error)"))
                return nil
            }
        } else if isPointer && element.attributes.count == 1 {
            issues.append(CourseIssue(usageID: id, file: file, message: "<\(type) url_name=\"\(urlName)\"/> points to \(pointerFile), which is missing"))
            return nil
        } else {
            resolved = Resolved(definition: element, source: source, file: file, attributes: merge(element.attributes, []))
        }

        if let first = definedBy[id] {
            issues.append(CourseIssue(usageID: id, file: resolved.file, message: "duplicate url_name \"\(urlName)\" for <\(type)>, already defined in \(first); this one is skipped"))
            return nil
        }
        definedBy[id] = resolved.file
        visiting.insert(resolved.file)
        defer { visiting.remove(resolved.file) }
        add(type: type, urlName: urlName, resolved: resolved, parents: parents)
        return id
    }

    private mutating func add(type: String, urlName: String, resolved: Resolved, parents: [String]) {
        let id = usageID(type, urlName)
        definedBy[id] = resolved.file
        var attributes = resolved.attributes
        for (key, value) in policy.overrides["\(type)/\(urlName)"] ?? [:] { attributes[key] = value }
        let position = blocks.count
        blocks.append(Block(
            type: type, urlName: urlName, usageID: id, displayName: attributes["display_name"],
            attributes: attributes, definition: resolved.definition, definitionSource: resolved.source,
            file: resolved.file, parents: parents, children: []))
        guard Block.containerTypes.contains(type) else { return }
        var children: [String] = []
        var members = resolved.definition.childElements
        // A learner sees one group of a split test; offline bundles carry the default (first) one.
        if type == "split_test" { members = Array(members.prefix(1)) }
        for (index, child) in members.enumerated() {
            if let childID = visit(child, index: index, source: resolved.source, file: resolved.file, parents: [id] + parents) {
                children.append(childID)
            }
        }
        blocks[position].children = children
    }

    private func merge(_ base: [XMLAttribute], _ overrides: [XMLAttribute]) -> [String: String] {
        var result: [String: String] = [:]
        for attribute in base + overrides { result[attribute.name] = attribute.value }
        return result
    }

    static func readAndParse(_ directory: ExportDirectory, _ file: String) throws(CourseError) -> ([UInt8], XMLElement) {
        let bytes = try directory.read(file)
        do {
            return (bytes, try XMLTree.parse(bytes))
        } catch {
            throw .malformedXML(path: file, error)
        }
    }

    /// Reads and parses every `TYPE/*.xml` file of the export at once, with `workers` threads:
    /// a course has thousands, and reading them one by one is most of the time a load takes.
    static func prefetch(_ directory: ExportDirectory, workers: Int) -> [String: Result<([UInt8], XMLElement), CourseError>] {
        let manager = FileManager.default
        var found: [String] = []
        for folder in (try? manager.contentsOfDirectory(atPath: directory.root)) ?? [] where !folder.hasPrefix(".") {
            guard !["static", "drafts", "policies", "about", "info", "course"].contains(folder) else { continue }
            found += directory.files(under: folder).filter { $0.hasSuffix(".xml") }
        }
        let files = found
        let results = files.parallelMap(workers: workers) { file in
            Result { () throws(CourseError) in try readAndParse(directory, file) }
        }
        var map: [String: Result<([UInt8], XMLElement), CourseError>] = [:]
        for (file, result) in zip(files, results) { map[file] = result }
        return map
    }

    /// Why a url_name cannot name a file inside the export, or nil when it can.
    static func problemWithURLName(_ name: String) -> String? {
        if name.isEmpty { return "empty url_name" }
        if name.utf8.contains(0) { return "url_name contains a NUL byte" }
        if name.contains("/") || name.contains("\\") { return "url_name contains a path separator" }
        if name.split(separator: ":", omittingEmptySubsequences: false).contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }) {
            return "url_name contains an empty, . or .. path component"
        }
        return nil
    }

    /// Stable id for an inline block without url_name: the same position in the same parent
    /// always gives the same id, so rebuilds stay incremental.
    static func generatedURLName(parent: String, type: String, index: Int) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(parent)|\(type)|\(index)".utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16).leftPadded(to: 16)
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
