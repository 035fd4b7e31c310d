// CP5xx: the device and its sync (SyncClient, ClientTarget)
extension DiagnosticID {
    static let device: [DiagnosticID] = []
}
