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
        do {
            return (try load(export.directory, workers: workers), export)
        } catch {
            export.close()
            throw error
        }
    }

    public static func load(
        _ directory: ExportDirectory, workers: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(CourseError) -> Course {
        let courseXML = try parse(directory, "course.xml")
        guard courseXML.name == "course" else {
            throw .notACourse(path: "course.xml", reason: "root element is <\(courseXML.name)>, expected <course>")
        }
        func identifier(_ name: String) throws(CourseError) -> String {
            guard let value = courseXML.attribute(name), !value.isEmpty else {
                throw .notACourse(path: "course.xml", reason: "the <course> element has no \(name) attribute")
            }
            guard value.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil || "._-~".unicodeScalars.contains($0) }) else {
                throw .invalid(path: "course.xml", reason: "\(name)=\"\(value)\" contains characters not allowed in a course id")
            }
            return value
        }
        let run = try identifier("url_name")
        let org = try identifier("org")
        let number = try identifier("course")

        let policy = try Policy.load(directory, run: run)
        var walker = TreeWalker(directory: directory, org: org, number: number, run: run, policy: policy)
        walker.prefetched = TreeWalker.prefetch(directory, workers: workers)
        let runFile = "course/\(run).xml"
        let courseDefinition = try parse(directory, runFile)
        let source = try directory.read(runFile)
        walker.visitCourse(courseDefinition, pointer: courseXML, source: source, file: runFile)

        let courseBlock = walker.blocks.first
        let staticPaths = directory.files(under: "static").map { String($0.dropFirst("static/".count)) }
        return Course(
            org: org, number: number, run: run,
            displayName: courseBlock?.displayName ?? "\(org) \(number)",
            language: courseBlock?.attributes["language"] ?? "en",
            root: directory.root,
            blocks: walker.blocks,
            staticFiles: StaticIndex(paths: staticPaths, assetsJSON: try Policy.assets(directory)),
            issues: walker.issues)
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
        let file = "policies/\(run)/policy.json"
        guard directory.exists(file) else { return Policy() }
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
