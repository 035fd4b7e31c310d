/// A course's org, number and run from `course.xml`, with the LMS's defaults for old exports:
/// org "edx", the folder's name for the number, and for the run `url_name`, else `slug`, else
/// the cleaned `name`.
struct CourseIdentity {
    let org: String
    let number: String
    let run: String
    /// Each default used, as the LMS import logs it.
    private(set) var warnings: [CourseIssue] = []

    init(_ courseXML: XMLElement, folder: String) throws(CourseError) {
        var warnings: [CourseIssue] = []
        func attribute(_ name: String, default fallback: String) throws(CourseError) -> String {
            if let value = courseXML.attribute(name), !value.isEmpty { return try Self.identifier(name, value) }
            warnings.append(CourseIssue(.courseDefault, usageID: nil, file: "course.xml", message: "the <course> element has no \(name) attribute; using \"\(fallback)\" as the LMS does"))
            return try Self.identifier(name, fallback)
        }
        org = try attribute("org", default: "edx")
        number = try attribute("course", default: BlockNaming.cleanedName(folder))
        let runValue = [courseXML.attribute("url_name"), courseXML.attribute("slug"), courseXML.attribute("name").map(BlockNaming.cleanedName)]
            .compactMap { $0 }.first { !$0.isEmpty }
        guard let runValue else {
            throw .notACourse(path: "course.xml", reason: "the <course> element has no url_name (nor slug or name) attribute")
        }
        run = try Self.identifier("url_name", runValue)
        self.warnings = warnings
    }

    /// A course key part may hold letters, digits and `._-~` only.
    private static func identifier(_ name: String, _ value: String) throws(CourseError) -> String {
        guard value.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil || "._-~".unicodeScalars.contains($0) }) else {
            throw .invalid(path: "course.xml", reason: "\(name)=\"\(value)\" contains characters not allowed in a course id")
        }
        return value
    }
}
