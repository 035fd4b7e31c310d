// CP3xx: building, archives and the manifest (Packager, ZipArchive, IncrementalBuild, Manifest)
extension DiagnosticID {
    public static let runtimeNotInstalled = DiagnosticID("CP301", "the page runtime is not installed")
    public static let outputUnusable = DiagnosticID("CP302", "the output folder cannot be used")
    public static let outputBusy = DiagnosticID("CP303", "another build holds the output folder")
    public static let buildOptionInvalid = DiagnosticID("CP304", "a build option is not valid")
    public static let courseNotLoaded = DiagnosticID("CP305", "the course export cannot be loaded")
    public static let fileCallFailed = DiagnosticID("CP310", "a file cannot be read or written")
    public static let entryNameInvalid = DiagnosticID("CP311", "an archive entry name is not valid")
    public static let compressionFailed = DiagnosticID("CP312", "zlib failed")
    public static let archiveMalformed = DiagnosticID("CP313", "an archive is not a valid ZIP file")
    public static let archiveRefused = DiagnosticID("CP314", "an archive is refused as unsafe")
    public static let manifestUnreadable = DiagnosticID("CP320", "a manifest cannot be read")
    public static let manifestUnwritable = DiagnosticID("CP321", "a manifest cannot be written")
    public static let manifestInvalid = DiagnosticID("CP322", "a manifest is not valid")
    public static let manifestNewer = DiagnosticID("CP323", "a manifest's schema is newer than this coursepack")
    public static let publishMismatch = DiagnosticID("CP330", "a published archive does not match its manifest")
    public static let manifestSplitOnly = DiagnosticID("CP331", "manifest.json is too large for clients: only manifest-index.json is written")
    public static let manifestBeyondClientLimit = DiagnosticID("CP332", "a manifest part or index is larger than clients accept")

    static let building: [DiagnosticID] = [
        runtimeNotInstalled, outputUnusable, outputBusy, buildOptionInvalid, courseNotLoaded,
        fileCallFailed, entryNameInvalid, compressionFailed, archiveMalformed, archiveRefused,
        manifestUnreadable, manifestUnwritable, manifestInvalid, manifestNewer, publishMismatch, manifestSplitOnly,
        manifestBeyondClientLimit,
    ]
}
