// CP4xx: publishing (StoragePublisher)
extension DiagnosticID {
    static let publishing: [DiagnosticID] = []
}
