// CP1xx: reading a course export (CourseExport)
extension DiagnosticID {
    // The course is refused (exit 2).
    public static let notACourse = DiagnosticID("CP101", "not an Open edX course export")
    public static let unreadableFile = DiagnosticID("CP102", "a file of the export cannot be read")
    public static let malformedXML = DiagnosticID("CP103", "a file of the export is not well-formed XML")
    public static let invalidCourse = DiagnosticID("CP104", "the course's identity or a required file is not valid")
    public static let unsafeArchive = DiagnosticID("CP105", "the export archive is unsafe and was refused")
    // One block is left out, with its subtree.
    public static let unusableURLName = DiagnosticID("CP110", "a block's url_name or filename cannot name a file in the export")
    public static let missingDefinition = DiagnosticID("CP111", "a block's definition file is missing")
    public static let unreadableDefinition = DiagnosticID("CP112", "a block's definition file cannot be read or parsed")
    public static let nestingTooDeep = DiagnosticID("CP113", "blocks nest too deep or include themselves")
    // Read as the LMS import reads it, with a warning.
    public static let reusedURLName = DiagnosticID("CP120", "a url_name is used again")
    public static let courseDefault = DiagnosticID("CP121", "course.xml lacks an attribute; the LMS's default is used")
    public static let unreadableGroups = DiagnosticID("CP122", "group_access or a split test's groups cannot be read")
    public static let ignoredPolicy = DiagnosticID("CP123", "a policy file is not valid JSON and is ignored")
    public static let courseFileTooLarge = DiagnosticID("CP124", "a course file is larger than a client accepts and is left out")
    public static let longDisplayName = DiagnosticID("CP125", "a display name is longer than a page shows and is cut")

    static let courseExport: [DiagnosticID] = [
        notACourse, unreadableFile, malformedXML, invalidCourse, unsafeArchive,
        unusableURLName, missingDefinition, unreadableDefinition, nestingTooDeep,
        reusedURLName, courseDefault, unreadableGroups, ignoredPolicy, courseFileTooLarge, longDisplayName,
    ]
}
