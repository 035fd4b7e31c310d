// CP3xx: building, archives and the manifest (Packager, ZipArchive, IncrementalBuild, Manifest)
extension DiagnosticID {
    static let building: [DiagnosticID] = []
}
