import Foundation

/// Reads an OLX export into a `Course`: follows pointers and inline children from `course.xml`
/// down, applies policy overrides, and skips what is not published (`drafts/`, `wiki`).
public enum CourseLoader {
    /// Loads from an export folder (or its parent) or a `.tar.gz`; the caller closes the export.
    /// `workers` threads read and parse block files (`--jobs 1` means one thread throughout).
    public static func open(
        _ path: String, workers: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(CourseError) -> (Course, OpenedExport) {
        let export = try OpenedExport.open(path)
        // A tarball unpacks into a temporary folder whose name means nothing: name it after the tarball.
        let folderName = export.temporaryFolder == nil ? nil : Self.nameWithoutArchiveSuffix(path)
        do {
            return (try load(export.directory, workers: workers, folderName: folderName), export)
        } catch {
            export.close()
            throw error
        }
    }

    /// `folderName` stands in for the export folder's name, which old exports without a
    /// `course` attribute take as the course number (as the LMS does).
    public static func load(
        _ directory: ExportDirectory, workers: Int = ProcessInfo.processInfo.activeProcessorCount, folderName: String? = nil
    ) throws(CourseError) -> Course {
        let courseXML = try parse(directory, "course.xml")
        guard courseXML.name == "course" else {
            throw .notACourse(path: "course.xml", reason: "root element is <\(courseXML.name)>, expected <course>")
        }
        var warnings: [CourseIssue] = []
        func identifier(_ name: String, _ value: String) throws(CourseError) -> String {
            guard value.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil || "._-~".unicodeScalars.contains($0) }) else {
                throw .invalid(path: "course.xml", reason: "\(name)=\"\(value)\" contains characters not allowed in a course id")
            }
            return value
        }
        // The LMS's defaults for old exports: org "edx", the folder's name for the number, and
        // for the run `url_name`, else `slug`, else the cleaned `name`.
        func attribute(_ name: String, default fallback: String) throws(CourseError) -> String {
            if let value = courseXML.attribute(name), !value.isEmpty { return try identifier(name, value) }
            warnings.append(CourseIssue(usageID: nil, file: "course.xml", message: "the <course> element has no \(name) attribute; using \"\(fallback)\" as the LMS does"))
            return try identifier(name, fallback)
        }
        let org = try attribute("org", default: "edx")
        let folder = folderName ?? directory.root.split(separator: "/").last.map(String.init) ?? "course"
        let number = try attribute("course", default: TreeWalker.cleanedName(folder))
        let runValue = [courseXML.attribute("url_name"), courseXML.attribute("slug"), courseXML.attribute("name").map(TreeWalker.cleanedName)]
            .compactMap { $0 }.first { !$0.isEmpty }
        guard let runValue else {
            throw .notACourse(path: "course.xml", reason: "the <course> element has no url_name (nor slug or name) attribute")
        }
        let run = try identifier("url_name", runValue)

        let policy = try Policy.load(directory, run: run)
        var walker = TreeWalker(directory: directory, org: org, number: number, run: run, policy: policy)
        for warning in warnings { walker.reportCourseWarning(warning) }
        walker.prefetched = TreeWalker.prefetch(directory, workers: workers)
        // course.xml either points to course/RUN.xml or, in old exports, is the course itself.
        let isPointer = courseXML.childElements.isEmpty && courseXML.text.allSatisfy { $0.isWhitespace }
        let runFile = "course/\(run).xml"
        if !isPointer {
            walker.visitCourse(courseXML, pointer: courseXML, source: try directory.read("course.xml"), file: "course.xml")
        } else if directory.exists(runFile) {
            let courseDefinition = try parse(directory, runFile)
            let source = try directory.read(runFile)
            walker.visitCourse(courseDefinition, pointer: courseXML, source: source, file: runFile)
        } else {
            // As the LMS import reports it: the course's own file is missing, so it has no content.
            walker.reportCourseIssue(CourseIssue(
                usageID: walker.usageID("course", run), file: runFile,
                message: "course.xml points to \(runFile), which is missing: the course has no content"))
            walker.visitCourse(courseXML, pointer: courseXML, source: try directory.read("course.xml"), file: "course.xml")
        }

        let courseBlock = walker.blocks.first
        let staticPaths = directory.files(under: "static").map { String($0.dropFirst("static/".count)) }
            .filter { !StaticIndex.isAppleDouble($0) }
        return Course(
            org: org, number: number, run: run,
            displayName: courseBlock?.displayName ?? "\(org) \(number)",
            language: courseBlock?.attributes["language"] ?? "en",
            root: directory.root,
            blocks: walker.blocks,
            staticFiles: StaticIndex(paths: staticPaths, assetsJSON: try Policy.assets(directory)),
            issues: walker.issues,
            warnings: walker.warnings)
    }

    /// `exports/my_course.tar.gz` → `my_course`.
    static func nameWithoutArchiveSuffix(_ path: String) -> String {
        var name = path.split(separator: "/").last.map(String.init) ?? path
        for suffix in [".tar.gz", ".tgz", ".tar"] where name.lowercased().hasSuffix(suffix) {
            name = String(name.dropLast(suffix.count))
            break
        }
        return name.isEmpty ? "course" : name
    }

    static func parse(_ directory: ExportDirectory, _ file: String) throws(CourseError) -> XMLElement {
        guard directory.exists(file) else {
            throw .notACourse(path: file, reason: "file is missing")
        }
        let bytes = try directory.read(file)
        do {
            return try XMLTree.parse(bytes)
        } catch {
            throw .malformedXML(path: file, error)
        }
    }
}

/// Settings from `policies/RUN/policy.json`, keyed `"TAG/URL_NAME"`, which override attributes.
struct Policy {
    var overrides: [String: [String: String]] = [:]

    static func load(_ directory: ExportDirectory, run: String) throws(CourseError) -> Policy {
        // Old exports keep it in policies/RUN.json.
        guard let file = ["policies/\(run)/policy.json", "policies/\(run).json"].first(where: directory.exists) else {
            return Policy()
        }
        let bytes = try directory.read(file)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw .invalid(path: file, reason: "not a JSON object")
        }
        var policy = Policy()
        for (key, value) in object {
            guard let settings = value as? [String: Any] else { continue }
            policy.overrides[key] = settings.compactMapValues(Self.text)
        }
        return policy
    }

    static func assets(_ directory: ExportDirectory) throws(CourseError) -> [String: AssetRecord] {
        let file = "policies/assets.json"
        guard directory.exists(file) else { return [:] }
        let bytes = try directory.read(file)
        do {
            return try JSONDecoder().decode([String: AssetRecord].self, from: Data(bytes))
        } catch {
            throw .invalid(path: file, reason: "not a JSON object of asset records")
        }
    }

    private static func text(_ value: Any) -> String? {
        switch value {
        case let string as String: return string
        case is NSNull: return nil
        case let number as NSNumber: return number.stringValue
        default:
            guard JSONSerialization.isValidJSONObject(value),
                let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
            else { return nil }
            return String(decoding: data, as: UTF8.self)
        }
    }
}
