// CP9xx: command-line usage
extension DiagnosticID {
    public static let badUsage = DiagnosticID("CP901", "the command line is not valid")

    static let usage: [DiagnosticID] = [badUsage]
}
