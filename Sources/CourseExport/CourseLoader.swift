import FileSystem
import Foundation

/// Reads an OLX export into a `Course`: follows pointers and inline children from `course.xml`
/// down, applies policy overrides, and skips what is not published (`drafts/`, `wiki`).
public enum CourseLoader {
    /// Containers nest at most this many levels, the course included: as deep as a client
    /// takes an outline (`OutlineEntry.maximumDepth`, which a test holds equal to this). A block
    /// below is left out with an error (CP113): built 64 levels deep, a course of 33 built
    /// cleanly and no client would sync it.
    public static let deepestNesting = 32

    /// Loads from an export folder (or its parent) or a `.tar.gz`; the caller closes the export.
    /// `workers` threads read and parse block files (`--jobs 1` means one thread throughout).
    /// `largestStaticFile`: a file under `static/` larger than this is left out, with a warning.
    /// `known`: block files an earlier load read (`Course.readBlockFiles`), taken instead of the
    /// disk's while their stamps vouch for them; not asked for an unpacked tarball's files. With
    /// it, the files read are kept in `Course.readBlockFiles`. `stamps`: what a walk of `path`
    /// (or of a folder holding it) taken before this call saw of its plain files, the stamps
    /// the load and the returned export's folder give rather than `lstat` each file again.
    public static func open(
        _ path: String, workers: Int = ProcessInfo.processInfo.activeProcessorCount, largestStaticFile: UInt64 = .max,
        known: (any KnownBlockFiles)? = nil, stamps: PlainFileStamps = .none
    ) throws(CourseError) -> (Course, OpenedExport) {
        let export = try OpenedExport.open(path).stamped(by: stamps)
        let fromFolder = export.temporaryFolder == nil
        // A tarball unpacks into a temporary folder whose name means nothing: name it after the tarball.
        let folderName = fromFolder ? nil : Self.nameWithoutArchiveSuffix(path)
        do {
            let course = try load(
                export.directory, workers: workers, folderName: folderName, largestStaticFile: largestStaticFile,
                known: fromFolder && known?.root == export.directory.root ? known : nil, keepsReads: known != nil)
            return (course, export)
        } catch {
            export.close()
            throw error
        }
    }

    /// `folderName` stands in for the export folder's name, which old exports without a
    /// `course` attribute take as the course number (as the LMS does). `keepsReads`: the block
    /// files read are kept in `Course.readBlockFiles`.
    public static func load(
        _ directory: ExportDirectory, workers: Int = ProcessInfo.processInfo.activeProcessorCount, folderName: String? = nil,
        largestStaticFile: UInt64 = .max, known: (any KnownBlockFiles)? = nil, keepsReads: Bool = false
    ) throws(CourseError) -> Course {
        let courseXML = try parse(directory, "course.xml")
        guard courseXML.name == "course" else {
            throw .notACourse(path: "course.xml", reason: "root element is <\(courseXML.name)>, expected <course>")
        }
        let folder = folderName ?? directory.root.split(separator: "/").last.map(String.init) ?? "course"
        let identity = try CourseIdentity(courseXML, folder: folder)
        let (policy, policyWarnings) = try Policy.load(directory, run: identity.run)
        var walker = TreeWalker(directory: directory, org: identity.org, number: identity.number, run: identity.run, policy: policy)
        for warning in identity.warnings + policyWarnings { walker.reportCourseWarning(warning) }
        walker.prefetched = TreeWalker.prefetch(directory, workers: workers, known: known, keepsReads: keepsReads)
        let readBlockFiles = walker.prefetched.read
        walker.prefetched.read = []
        walker.reserveCapacity(walker.prefetched.parsed.count + 1)
        try visitCourseRoot(courseXML, directory: directory, walker: &walker)

        let (assets, assetWarnings) = try Policy.assets(directory)
        let courseBlock = walker.blocks.first
        var staticPaths = directory.files(under: "static").map { String($0.dropFirst("static/".count)) }
            .filter { !StaticIndex.isAppleDouble($0) }
        let (kept, tooLarge) = Self.withoutFilesOver(largestStaticFile, staticPaths, in: directory)
        staticPaths = kept
        return Course(
            org: identity.org, number: identity.number, run: identity.run,
            displayName: courseBlock?.displayName ?? "\(identity.org) \(identity.number)",
            language: courseBlock?.attributes["language"] ?? "en",
            root: directory.root,
            blocks: walker.blocks,
            staticFiles: StaticIndex(paths: staticPaths, assetsJSON: assets),
            issues: walker.issues.all,
            warnings: walker.warnings.all + assetWarnings + tooLarge,
            readBlockFiles: readBlockFiles)
    }

    /// Static files no larger than `limit`, and a warning for each of the others, which are never
    /// read: a stat each, which at 100,000 files is tens of milliseconds.
    static func withoutFilesOver(_ limit: UInt64, _ paths: [String], in directory: ExportDirectory) -> ([String], [CourseIssue]) {
        guard limit < .max else { return (paths, []) }
        var kept: [String] = []
        var warnings: [CourseIssue] = []
        kept.reserveCapacity(paths.count)
        for path in paths {
            let file = "static/" + path
            guard let size = FileStamp.of(directory.path(file))?.size, size > limit else {
                kept.append(path)
                continue
            }
            warnings.append(CourseIssue(
                .courseFileTooLarge, usageID: nil, file: file,
                message: "\(size) bytes, larger than the \(limit) bytes a client accepts for a course file: left out (never read), links to it are unresolved"))
        }
        return (kept, warnings)
    }

    /// course.xml either points to course/RUN.xml or, in old exports, is the course itself.
    private static func visitCourseRoot(_ courseXML: XMLElement, directory: ExportDirectory, walker: inout TreeWalker) throws(CourseError) {
        let isPointer = courseXML.childElements.isEmpty && courseXML.text.allSatisfy { $0.isWhitespace }
        let runFile = "course/\(walker.run).xml"
        if !isPointer {
            walker.visitCourse(courseXML, pointer: courseXML, source: try directory.read("course.xml"), file: "course.xml")
        } else if directory.exists(runFile) {
            let courseDefinition = try parse(directory, runFile)
            let source = try directory.read(runFile)
            walker.visitCourse(courseDefinition, pointer: courseXML, source: source, file: runFile)
        } else {
            // As the LMS import reports it: the course's own file is missing, so it has no content.
            walker.reportCourseIssue(CourseIssue(.missingDefinition,
                usageID: walker.usageID("course", walker.run), file: runFile,
                message: "course.xml points to \(runFile), which is missing: the course has no content"))
            walker.visitCourse(courseXML, pointer: courseXML, source: try directory.read("course.xml"), file: "course.xml")
        }
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
        return try TreeWalker.parse(directory.read(file), of: file)
    }
}

/// Settings from `policies/RUN/policy.json`, keyed `"TAG/URL_NAME"`, which override attributes.
struct Policy {
    var overrides: [String: [String: String]] = [:]

    /// As the LMS reads it: `policies/RUN/policy.json`, and when that gives nothing (missing,
    /// empty or not valid JSON), the old `policies/RUN.json`. A file that is not a JSON object
    /// is ignored with a warning, as the LMS logs one and carries on with an empty policy.
    static func load(_ directory: ExportDirectory, run: String) throws(CourseError) -> (Policy, [CourseIssue]) {
        var warnings: [CourseIssue] = []
        for file in ["policies/\(run)/policy.json", "policies/\(run).json"] where directory.exists(file) {
            let bytes = try directory.read(file)
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
                warnings.append(CourseIssue(.ignoredPolicy, usageID: nil, file: file, message: "not a JSON object; its settings (display names, dates, grading) are ignored, as the LMS import ignores them"))
                continue
            }
            guard !object.isEmpty else { continue }
            var policy = Policy()
            for (key, value) in object {
                guard let settings = value as? [String: Any] else { continue }
                policy.overrides[key] = settings.compactMapValues(Self.text)
            }
            return (policy, warnings)
        }
        return (Policy(), warnings)
    }

    /// `policies/assets.json`; the LMS's import reads it as empty when it is not valid JSON.
    static func assets(_ directory: ExportDirectory) throws(CourseError) -> ([String: AssetRecord], [CourseIssue]) {
        let file = "policies/assets.json"
        guard directory.exists(file) else { return ([:], []) }
        let bytes = try directory.read(file)
        do {
            return (try JSONDecoder().decode([String: AssetRecord].self, from: Data(bytes)), [])
        } catch {
            return ([:], [CourseIssue(.ignoredPolicy, usageID: nil, file: file, message: "not a JSON object of asset records; ignored (static files keep their own names and types), as the LMS import ignores it")])
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
