// CP2xx: rendering blocks and resolving links (BlockRenderer, LinkRewriter)
extension DiagnosticID {
    static let rendering: [DiagnosticID] = []
}
