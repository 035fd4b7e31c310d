// CP6xx: serve and the LMS (CourseServer, the LMS client)
extension DiagnosticID {
    static let serving: [DiagnosticID] = []
}
