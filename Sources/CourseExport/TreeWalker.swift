import Foundation
import ParallelMap

/// Walks the block tree depth first, reading each element the way the LMS import
/// (edx-platform's XML modulestore) reads it: pointers (`<vertical url_name="x"/>` means
/// `vertical/x.xml`), `filename=` definitions, inline definitions, legacy names (`slug`,
/// `name`, `display_name`), and duplicate names made unique. A block that cannot be read
/// becomes a `CourseIssue` and is left out with its subtree; the rest of the course still loads.
struct TreeWalker {
    let directory: ExportDirectory
    let org: String
    let number: String
    let run: String
    let policy: Policy
    private(set) var blocks: [Block] = []
    private(set) var issues = CourseIssueList()
    private(set) var warnings = CourseIssueList()
    /// Block files read and parsed ahead, in parallel; the walk itself stays sequential.
    /// Keyed by the path's bytes (`FileNameKey`).
    var prefetched = Prefetched()
    /// Usage id → the file that defined it, to tell a second use of a name from the first.
    private var definedBy: [String: String] = [:]
    /// Usage id → the file its element is written in (a pointer's parent), for messages.
    private var usedIn: [String: String] = [:]
    private var visiting: Set<String> = []

    /// Tags that are never published content.
    static let unpublishedTypes: Set<String> = ["wiki"]
    /// Child elements that are settings of their parent, not blocks: the LMS reads a course's
    /// `<textbook>` and a conditional's `<show>` into fields of the parent.
    static let settingElements: [String: Set<String>] = ["course": ["textbook"], "conditional": ["show"]]
    /// Hard bound on nesting, so a cycle or absurd nesting cannot exhaust the stack, and no
    /// deeper than a client takes an outline (`CourseLoader.deepestNesting`).
    static let maximumDepth = CourseLoader.deepestNesting

    /// `block-v1:ORG+NUMBER+RUN+type@`, the same for every block.
    private let usageIDPrefix: String

    init(directory: ExportDirectory, org: String, number: String, run: String, policy: Policy) {
        self.directory = directory
        self.org = org
        self.number = number
        self.run = run
        self.policy = policy
        usageIDPrefix = "block-v1:\(org)+\(number)+\(run)+type@"
    }

    func usageID(_ type: String, _ urlName: String) -> String {
        usageIDPrefix + type + "+block@" + urlName
    }

    /// What a block inherits from the blocks above it.
    private struct Context {
        /// Usage ids of the enclosing blocks, nearest first.
        var parents: [String] = []
        var groupAccess: [Int: [Int]] = [:]
        var splitTestGroup: SplitTestGroup?
    }

    private struct Resolved {
        let definition: XMLElement
        let source: [UInt8]
        let file: String
        let attributes: [String: String]
    }

    mutating func visitCourse(_ definition: XMLElement, pointer: XMLElement, source: [UInt8], file: String) {
        let resolved = Resolved(definition: definition, source: source, file: file,
                                attributes: merge(definition.attributes, pointer.attributes))
        add(type: "course", urlName: run, id: usageID("course", run), resolved: resolved, context: Context(), htmlFile: nil)
    }

    /// Room for `count` blocks in the walk's name tables, so that at 100,000 blocks they are
    /// not grown and rehashed a dozen times over.
    mutating func reserveCapacity(_ count: Int) {
        definedBy.reserveCapacity(count)
        usedIn.reserveCapacity(count)
    }

    /// Records that the course's own definition could not be read; the course is then empty.
    mutating func reportCourseIssue(_ issue: CourseIssue) { issues.append(issue) }
    mutating func reportCourseWarning(_ warning: CourseIssue) { warnings.append(warning) }

    /// `serialized` gives the element as the LMS import hashes it, for a name it has to make up.
    private mutating func visit(_ element: XMLElement, source: [UInt8], file: String, context: Context, serialized: () -> [UInt8]) -> String? {
        let type = element.name
        if Self.unpublishedTypes.contains(type) { return nil }
        let parent = context.parents.first ?? ""
        guard context.parents.count < Self.maximumDepth else {
            issues.append(CourseIssue(.nestingTooDeep, usageID: nil, file: file, message: "blocks nested deeper than \(Self.maximumDepth) levels under \(parent)"))
            return nil
        }
        // The name as written finds the block's files; the name in NFC is its identity.
        guard let writtenName = name(of: element, file: file, serialized: serialized) else { return nil }
        // With no attribute and no content, the LMS reads the element as a pointer to a file
        // named by its hash, which is never there, and shows an error in its place.
        if element.attributes.isEmpty && element.childElements.isEmpty && element.text.allSatisfy(\.isWhitespace) {
            warnings.append(CourseIssue(.missingDefinition, usageID: nil, file: file, message: "an empty <\(type)/> without attributes is left out: the LMS import reads it as a pointer to \(type)/\(writtenName).xml, which is missing, and shows an error there"))
            return nil
        }
        var urlName = Self.normalizedURLName(writtenName)
        let declaredID = usageID(type, urlName)
        var id = declaredID
        // Named before its definition is read, as the LMS does: a name stays taken even when
        // the block then fails to load.
        if definedBy[declaredID] != nil {
            guard let unique = renamedReuse(type: type, urlName: urlName, file: file, serialized: serialized) else { return nil }
            urlName = unique
            id = usageID(type, urlName)
        }
        definedBy[id] = file

        guard let resolved = resolve(element, type: type, urlName: writtenName, id: declaredID, source: source, file: file) else {
            return nil
        }
        var htmlFile: String?
        if type == "html", let filename = resolved.attributes["filename"], !filename.isEmpty {
            switch Self.htmlFile(filename: filename, urlName: writtenName, exists: { self.exists($0) }) {
            case .success(let found): htmlFile = found
            case .failure(let problem):
                issues.append(CourseIssue(.unusableURLName, usageID: declaredID, file: resolved.file, message: problem.description))
                return nil
            }
        }
        usedIn[id] = file
        let inserted = visiting.insert(resolved.file).inserted
        defer { if inserted { visiting.remove(resolved.file) } }
        return add(type: type, urlName: urlName, id: id, resolved: resolved, context: context, htmlFile: htmlFile)
    }

    /// The name the LMS gives the element (before making it unique); nil, with an issue, when
    /// a `url_name` cannot name a file inside the export.
    private mutating func name(of element: XMLElement, file: String, serialized: () -> [UInt8]) -> String? {
        switch BlockNaming.declaredName(of: element) {
        case .explicit(let attribute, let given):
            if let problem = Self.problemWithURLName(given) {
                issues.append(CourseIssue(.unusableURLName, usageID: nil, file: file, message: "<\(element.name) \(attribute)=\"\(given)\">: \(problem)"))
                return nil
            }
            return given
        case .derived(let name) where Self.problemWithURLName(name) == nil:
            return name
        case .derived, .none:
            return BlockNaming.fallbackName(tag: element.name, taken: nil, serialized: serialized())
        }
    }

    /// A later use of a taken name, as the LMS import treats it: a block that keeps learner
    /// state gets a new name from its content; any other keeps the name, and the LMS keeps
    /// one block of that id, so this one is left out (nil).
    private mutating func renamedReuse(type: String, urlName: String, file: String, serialized: () -> [UInt8]) -> String? {
        let first = usedIn[usageID(type, urlName)] ?? definedBy[usageID(type, urlName)] ?? "?"
        let renamed = BlockNaming.renamedWhenReused.contains(type)
            ? BlockNaming.fallbackName(tag: type, taken: urlName, serialized: serialized()) : urlName
        guard definedBy[usageID(type, renamed)] == nil else {
            warnings.append(CourseIssue(.reusedURLName,
                usageID: usageID(type, renamed), file: file,
                message: "url_name \"\(renamed)\" of <\(type)> is used again (first in \(first)); the LMS import keeps one block of that id, so this use is left out"))
            return nil
        }
        warnings.append(CourseIssue(.reusedURLName,
            usageID: usageID(type, renamed), file: file,
            message: "url_name \"\(urlName)\" of <\(type)> is used again (first in \(first)); the LMS import warns and renames the later one, so this one is published as \"\(renamed)\""))
        return renamed
    }

    /// The element's definition: the file a pointer or a `filename` names, or the element itself.
    private mutating func resolve(_ element: XMLElement, type: String, urlName: String, id: String, source: [UInt8], file: String) -> Resolved? {
        // Non-html blocks of old courses name their definition file with `filename`
        // (`<problem filename="p1"/>` is `problem/p1.xml`); html's `filename` is its HTML file.
        if type != "html", let filename = element.attribute("filename"), !filename.isEmpty {
            guard Self.isPathInsideFolder(filename) else {
                issues.append(CourseIssue(.unusableURLName, usageID: id, file: file, message: "<\(type) filename=\"\(filename)\">: not a plain file name inside \(type)/"))
                return nil
            }
            let name = "\(filename.hasSuffix(".xml") ? String(filename.dropLast(4)) : filename).xml"
            let primary = "\(type)/\(name)"
            // Fall 2012 courses kept problems in problems/ or at the top; the LMS still looks there.
            let candidates = [primary] + (type == "problem" ? ["problems/\(name)", name] : [])
            guard let definitionFile = candidates.first(where: exists) else {
                issues.append(CourseIssue(.missingDefinition, usageID: id, file: file, message: "<\(type) filename=\"\(filename)\"/> points to \(primary), which is missing"))
                return nil
            }
            guard !visiting.contains(definitionFile) else {
                issues.append(CourseIssue(.nestingTooDeep, usageID: id, file: definitionFile, message: "definition cycle: \(definitionFile) includes itself"))
                return nil
            }
            return load(definitionFile, pointer: element, id: id)
        }

        let reference = element.attribute("url_name") ?? element.attribute("slug")
        let isPointer = reference != nil && element.childElements.isEmpty
            && element.text.allSatisfy { $0.isWhitespace }
        let pointerFile = "\(type)/\(Self.path(ofURLName: urlName)).xml"
        if isPointer && exists(pointerFile) {
            guard !visiting.contains(pointerFile) else {
                issues.append(CourseIssue(.nestingTooDeep, usageID: id, file: pointerFile, message: "pointer cycle: \(pointerFile) includes itself"))
                return nil
            }
            return load(pointerFile, pointer: element, id: id)
        }
        if isPointer && element.attributes.count == 1 {
            issues.append(CourseIssue(.missingDefinition, usageID: id, file: file, message: "<\(type) url_name=\"\(urlName)\"/> points to \(pointerFile), which is missing"))
            return nil
        }
        return Resolved(definition: element, source: source, file: file, attributes: merge(element.attributes, []))
    }

    /// A definition file; its root element's name does not matter (the LMS takes the type from
    /// the pointer, and old exports hold `<sequential>` in `chapter/` or `<ol>` in `html/`).
    private mutating func load(_ definitionFile: String, pointer: XMLElement, id: String) -> Resolved? {
        let loaded: ([UInt8], XMLElement)
        switch prefetched.parsed[FileNameKey(definitionFile)] {
        case .success(let value)?: loaded = value
        case .failure(let error)?:
            issues.append(CourseIssue(.unreadableDefinition, usageID: id, file: definitionFile, message: "\(error)"))
            return nil
        case nil:
            do {
                loaded = try Self.readAndParse(directory, definitionFile)
            } catch {
                issues.append(CourseIssue(.unreadableDefinition, usageID: id, file: definitionFile, message: "\(error)"))
                return nil
            }
        }
        let (bytes, definition) = loaded
        return Resolved(definition: definition, source: bytes, file: definitionFile,
                        attributes: merge(definition.attributes, pointer.attributes))
    }

    private func exists(_ file: String) -> Bool {
        // A listed file exists (a prefetched one even when it failed to parse); only others
        // need a look.
        let key = FileNameKey(file)
        return prefetched.parsed[key] != nil || prefetched.listed.contains(key) || directory.exists(file)
    }

    @discardableResult
    private mutating func add(type: String, urlName: String, id: String, resolved: Resolved, context: Context, htmlFile: String?) -> String {
        definedBy[id] = resolved.file
        var attributes = resolved.attributes
        if !policy.overrides.isEmpty {
            for (key, value) in policy.overrides["\(type)/\(urlName)"] ?? [:] { attributes[key] = value }
        }
        if let name = attributes["display_name"], name.count > Block.displayNameLimit {
            attributes["display_name"] = String(name.prefix(Block.displayNameLimit)) + "…"
            warnings.append(CourseIssue(.longDisplayName, usageID: id, file: resolved.file, message: "display_name of \(name.count) characters is cut to its first \(Block.displayNameLimit)"))
        }
        var own: [Int: [Int]] = [:]
        if let text = attributes["group_access"] {
            if let parsed = Self.groupAccess(text) {
                own = parsed
            } else {
                warnings.append(CourseIssue(.unreadableGroups, usageID: id, file: resolved.file, message: "group_access \"\(text)\" is not a JSON object of user partition ids to group id lists; ignored, so every learner sees the block"))
            }
        }
        let position = blocks.count
        let groupAccess = Self.merged(context.groupAccess, own)
        blocks.append(Block(
            type: type, urlName: urlName, usageID: id, displayName: attributes["display_name"],
            attributes: attributes, definition: resolved.definition, definitionSource: resolved.source,
            file: resolved.file, parents: context.parents, children: [],
            groupAccess: groupAccess, splitTestGroup: context.splitTestGroup, htmlFile: htmlFile))
        guard blocks[position].isContainer else { return id }
        // From the values at hand, not from a copy of the block just appended: a copy retains
        // and releases its dozen fields, and the walk makes one per container.
        blocks[position].children = visitChildren(
            of: (type: type, usageID: id, attributes: attributes, groupAccess: groupAccess), resolved: resolved, context: context)
        return id
    }

    /// The container's children in order, named as the LMS names them: a child without a
    /// name is named from its serialisation, made only when one is needed.
    private mutating func visitChildren(
        of block: (type: String, usageID: String, attributes: [String: String], groupAccess: [Int: [Int]]), resolved: Resolved, context: Context
    ) -> [String] {
        let settings = Self.settingElements[block.type] ?? []
        let split = block.type == "split_test" ? splitTestGroups(block.attributes, id: block.usageID, file: resolved.file) : nil
        let output = BlockNaming.serializationOutput(ofChildrenOf: block.type)
        var serializations: [[UInt8]]?
        var children: [String] = []
        for (index, child) in resolved.definition.childElements.enumerated() where !settings.contains(child.name) {
            let serialized = { () -> [UInt8] in
                if serializations == nil {
                    serializations = LXMLSerializer.childElements(of: resolved.definition, in: resolved.source, output: output)
                }
                return serializations.map { index < $0.count ? $0[index] : [] } ?? []
            }
            var inner = Context(parents: [block.usageID] + context.parents, groupAccess: block.groupAccess, splitTestGroup: context.splitTestGroup)
            if let split {
                let name = BlockNaming.declaredName(of: child)?.value ?? BlockNaming.fallbackName(tag: child.name, taken: nil, serialized: serialized())
                inner = splitTestContext(inner, split: split, child: child.name, name: name, splitTest: block.usageID, file: resolved.file)
            }
            if let childID = visit(child, source: resolved.source, file: resolved.file, context: inner, serialized: serialized) {
                children.append(childID)
            }
        }
        return children
    }

    /// Every group of a split test is content: each child carries the group that sees it.
    private mutating func splitTestContext(
        _ context: Context, split: (partition: Int, groups: [String: [Int]]), child type: String, name: String, splitTest: String, file: String
    ) -> Context {
        var inner = context
        let groups = split.groups["\(type)/\(name)"] ?? []
        inner.splitTestGroup = SplitTestGroup(splitTest: splitTest, userPartitionID: split.partition, groupID: groups.first)
        inner.groupAccess[split.partition] = (inner.groupAccess[split.partition] ?? groups).filter(groups.contains)
        if groups.isEmpty {
            warnings.append(CourseIssue(.unreadableGroups, usageID: splitTest, file: file, message: "<\(type)> \"\(name)\" of the split_test is in no group of its group_id_to_child, so the LMS shows it to no learner; it is published with an empty group list"))
        }
        return inner
    }

    /// A split test's user partition and, per child (`"TYPE/URL_NAME"`), the groups shown it;
    /// nil (every child shown to every learner, with a warning) when the partition is unreadable.
    private mutating func splitTestGroups(_ attributes: [String: String], id: String, file: String) -> (partition: Int, groups: [String: [Int]])? {
        guard let partitionText = attributes["user_partition_id"], let partition = Int(partitionText.trimmingCharacters(in: .whitespaces)) else {
            warnings.append(CourseIssue(.unreadableGroups, usageID: id, file: file, message: "split_test has no readable user_partition_id; its groups are published for every learner"))
            return nil
        }
        var groups: [String: [Int]] = [:]
        let mapping = attributes["group_id_to_child"].flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        if mapping == nil {
            warnings.append(CourseIssue(.unreadableGroups, usageID: id, file: file, message: "split_test has no readable group_id_to_child (a JSON object of group id to child location)"))
        }
        for (key, value) in mapping ?? [:] {
            guard let group = Int(key), let location = value as? String, let child = Self.typeAndName(ofLocation: location) else {
                warnings.append(CourseIssue(.unreadableGroups, usageID: id, file: file, message: "split_test group_id_to_child entry \"\(key)\" is not a group id and a child location; ignored"))
                continue
            }
            groups[child, default: []].append(group)
        }
        return (partition, groups.mapValues { $0.sorted() })
    }

    /// `"TYPE/NAME"` of `i4x://ORG/COURSE/TYPE/NAME` or `block-v1:…+type@TYPE+block@NAME`.
    static func typeAndName(ofLocation location: String) -> String? {
        if location.hasPrefix("i4x://") {
            let parts = location.dropFirst("i4x://".count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 4 else { return nil }
            return "\(parts[2])/\(parts[3].split(separator: "@").first ?? "")"
        }
        let fields = location.split(separator: "+")
        guard let type = fields.first(where: { $0.hasPrefix("type@") }), let name = fields.first(where: { $0.hasPrefix("block@") }) else {
            return nil
        }
        return "\(type.dropFirst("type@".count))/\(name.dropFirst("block@".count))"
    }

    /// `group_access` as Open edX stores it: `{"<partition id>": [group ids]}`; null lists mean
    /// no restriction. Nil when the text is not that.
    static func groupAccess(_ text: String) -> [Int: [Int]]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
        var result: [Int: [Int]] = [:]
        for (key, value) in object {
            guard let partition = Int(key) else { return nil }
            if value is NSNull { continue }
            guard let list = value as? [Any] else { return nil }
            var groups: [Int] = []
            for item in list {
                guard let number = item as? NSNumber, let group = Int(exactly: number.doubleValue) else { return nil }
                groups.append(group)
            }
            result[partition] = Array(Set(groups)).sorted()
        }
        return result
    }

    /// The LMS's merge down the tree: a partition restricted above and here allows only the
    /// groups both allow (possibly none); an empty list here restricts nothing.
    static func merged(_ inherited: [Int: [Int]], _ own: [Int: [Int]]) -> [Int: [Int]] {
        var result = inherited
        for (partition, groups) in own where !groups.isEmpty {
            // A set: 40,000 ids above and here once took 21 s as an array scan per id.
            let allowed = Set(groups)
            result[partition] = result[partition].map { $0.filter(allowed.contains) } ?? groups
        }
        return result
    }

    private func merge(_ base: [XMLAttribute], _ overrides: [XMLAttribute]) -> [String: String] {
        var result: [String: String] = [:]
        for attribute in base + overrides { result[attribute.name] = attribute.value }
        return result
    }

    /// A url_name as it names its block everywhere (usage id, archive, manifest): in Unicode
    /// NFC, so that two spellings of one name (NFC and NFD, as macOS keyboards type accents)
    /// are one name, compared byte for byte, and a second use is reported as a duplicate
    /// rather than merged by Swift's canonical string equality in one place and kept apart by
    /// byte-wise hashing in another.
    static func normalizedURLName(_ name: String) -> String {
        name.utf8.allSatisfy({ $0 < 0x80 }) ? name : name.precomposedStringWithCanonicalMapping
    }

    /// Where the LMS finds an html block's `filename`: `FILENAME.html` in the folder of the
    /// block's own pointer file (`html/`, or `html/a/` for url_name `a:b`); failing that, a
    /// name that already ends in `.html`, then the same path with leading folders dropped.
    /// The first that exists, else the first candidate (whose absence the renderer reports).
    static func htmlFile(filename: String, urlName: String, exists: (String) -> Bool) -> Result<String, HTMLFileProblem> {
        guard isPathInsideFolder(filename) else {
            return .failure(HTMLFileProblem(description: "filename=\"\(filename)\" is not a plain file name inside html/"))
        }
        let primary = htmlFolder(ofURLName: urlName) + "/" + filename + ".html"
        if exists(primary) { return .success(primary) }
        var path = primary.hasSuffix(".html.html") ? String(primary.dropLast(".html".count)) : primary
        var candidates: [String] = []
        while let slash = path.firstIndex(of: "/") {
            candidates.append(path)
            path = String(path[path.index(after: slash)...])
        }
        return .success(candidates.first(where: exists) ?? primary)
    }

    /// The folder an html block's file is looked for in: `html`, or for a url_name with
    /// colons (`a:b:c`) the folders they stand for (`html/a/b`). A plain url_name, as almost
    /// every block has, is told by its bytes: splitting a string into `Character`s for each of
    /// 27,000 html blocks was a tenth of the serial walk of a 100,000-block course.
    static func htmlFolder(ofURLName urlName: String) -> String {
        if !urlName.utf8.isEmpty, !urlName.utf8.contains(UInt8(ascii: ":")), !urlName.utf8.contains(UInt8(ascii: "/")) { return "html" }
        let pointerPath = "html/" + path(ofURLName: urlName)
        return pointerPath.split(separator: "/").dropLast().joined(separator: "/")
    }

    /// The path a url_name's colons stand for (`a:b` → `a/b`); a name without one, as almost
    /// every block's is, is itself.
    static func path(ofURLName urlName: String) -> String {
        guard urlName.utf8.contains(UInt8(ascii: ":")) else { return urlName }
        return urlName.split(separator: ":", omittingEmptySubsequences: false).joined(separator: "/")
    }

    struct HTMLFileProblem: Error, CustomStringConvertible {
        let description: String
    }

    /// A relative path that stays inside the folder it is relative to: no absolute path, no
    /// `.`/`..`/empty component, no backslash or NUL.
    static func isPathInsideFolder(_ path: String) -> Bool {
        let bytes = path.utf8
        return !bytes.isEmpty && !bytes.contains(UInt8(ascii: "\\")) && !bytes.contains(0)
            && !hasDotOrEmptyComponent(bytes, separator: UInt8(ascii: "/"))
    }

    static func readAndParse(_ directory: ExportDirectory, _ file: String) throws(CourseError) -> ([UInt8], XMLElement) {
        let bytes = try directory.read(file)
        return (bytes, try parse(bytes, of: file))
    }

    /// The bytes of `file` parsed, or the error that names the file.
    static func parse(_ bytes: [UInt8], of file: String) throws(CourseError) -> XMLElement {
        do {
            return try XMLTree.parse(bytes)
        } catch {
            throw .malformedXML(path: file, error)
        }
    }

    /// A file's name as its bytes: two canonically equivalent names (NFC and NFD) are two
    /// files, which `String` keys would merge. Hashed in one pass over the bytes, where an
    /// array of bytes as a key is hashed byte by byte: the walk looks up every block's file.
    struct FileNameKey: Hashable, Sendable {
        let bytes: [UInt8]

        init(_ name: String) { bytes = Array(name.utf8) }

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// The block files read and parsed ahead, and the names of the other regular files found
    /// beside them (html files), so the walk need not look for those on the disk.
    struct Prefetched: Sendable {
        var parsed: [FileNameKey: Result<([UInt8], XMLElement), CourseError>] = [:]
        var listed: Set<FileNameKey> = []
        /// The plain files read, with their stamps, in path order (only when asked for).
        var read: [ReadBlockFile] = []
    }

    /// Reads and parses every `TYPE/*.xml` file of the export at once, with `workers` threads:
    /// a course has thousands, and reading them one by one is most of the time a load takes.
    /// A plain file (`ExportDirectory.plainFileStamp`) whose bytes `known` gives for its stamp
    /// is not read; its stamp is taken before it is read, so a file written meanwhile has
    /// another stamp by the next load. `keepsReads`: the files are listed in `read`.
    static func prefetch(_ directory: ExportDirectory, workers: Int, known: (any KnownBlockFiles)? = nil, keepsReads: Bool = false) -> Prefetched {
        let manager = FileManager.default
        var found: [String] = []
        var prefetched = Prefetched()
        for folder in (try? manager.contentsOfDirectory(atPath: directory.root)) ?? [] where !folder.hasPrefix(".") {
            guard !["static", "drafts", "policies", "about", "info", "course"].contains(folder) else { continue }
            for file in directory.files(under: folder) {
                if file.hasSuffix(".xml") {
                    found.append(file)
                } else {
                    prefetched.listed.insert(FileNameKey(file))
                }
            }
        }
        let files = found
        let stamps = known != nil || keepsReads
        let results = files.parallelMap(workers: workers) { file -> (Result<([UInt8], XMLElement), CourseError>, ReadBlockFile?) in
            let stamp = stamps ? directory.plainFileStamp(file) : nil
            let bytes: [UInt8]
            var fromDisk = false
            if let stamp, let kept = known?.bytes(of: file, stamp: stamp), UInt64(kept.count) == stamp.size {
                bytes = kept
            } else {
                do throws(CourseError) {
                    bytes = try directory.read(file)
                    fromDisk = true
                } catch {
                    return (.failure(error), nil)
                }
            }
            let read = keepsReads ? stamp.map { ReadBlockFile(path: file, stamp: $0, bytes: bytes, fromDisk: fromDisk) } : nil
            return (Result { () throws(CourseError) in (bytes, try parse(bytes, of: file)) }, read)
        }
        prefetched.parsed.reserveCapacity(files.count)
        if keepsReads { prefetched.read.reserveCapacity(files.count) }
        for (file, (result, read)) in zip(files, results) {
            prefetched.parsed[FileNameKey(file)] = result
            if let read { prefetched.read.append(read) }
        }
        return prefetched
    }

    /// Why a url_name cannot name a file inside the export, or nil when it can.
    /// Read byte by byte (a separator is a separator whatever combining mark follows it), and
    /// without a string made: the walk asks this of every block.
    static func problemWithURLName(_ name: String) -> String? {
        let bytes = name.utf8
        if bytes.isEmpty { return "empty url_name" }
        // A name is copied into every descendant's parents in the manifest: a 1 MB url_name on
        // a unit of 200 inline blocks once made 193 MB of manifest parts.
        if bytes.count > 255 { return "url_name is \(bytes.count) bytes, longer than the 255 a file name may have (the LMS exports it as one)" }
        if bytes.contains(0) { return "url_name contains a NUL byte" }
        if bytes.contains(UInt8(ascii: "/")) || bytes.contains(UInt8(ascii: "\\")) { return "url_name contains a path separator" }
        if hasDotOrEmptyComponent(bytes, separator: UInt8(ascii: ":")) { return "url_name contains an empty, . or .. path component" }
        return nil
    }

    /// Whether a component between separators is empty, `.` or `..`.
    private static func hasDotOrEmptyComponent(_ bytes: String.UTF8View, separator: UInt8) -> Bool {
        var length = 0
        var dots = 0
        for byte in bytes {
            if byte == separator {
                if length == dots && dots <= 2 { return true }
                length = 0
                dots = 0
                continue
            }
            length += 1
            if byte == UInt8(ascii: ".") { dots += 1 }
        }
        return length == dots && dots <= 2
    }
}
