// CP1xx: reading a course export (CourseExport)
extension DiagnosticID {
    static let courseExport: [DiagnosticID] = []
}
