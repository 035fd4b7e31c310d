// CP2xx: rendering blocks and resolving links (BlockRenderer, LinkRewriter)
extension DiagnosticID {
    public static let linkNamesNoFile = DiagnosticID("CP201", "a link names no file of the course")
    public static let linkNamesNoBlock = DiagnosticID("CP202", "a link names no block of the course")
    public static let courseLinkNeedsLMS = DiagnosticID("CP203", "a course link is kept as written")
    public static let contentUnreadable = DiagnosticID("CP204", "a block's content cannot be read")
    public static let templateUnusable = DiagnosticID("CP205", "a page template cannot be used")

    static let rendering: [DiagnosticID] = [linkNamesNoFile, linkNamesNoBlock, courseLinkNeedsLMS, contentUnreadable, templateUnusable]
}
