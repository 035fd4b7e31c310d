// CP5xx: the device and its sync (SyncClient, ClientTarget, OfflineSearch)
extension DiagnosticID {
    public static let sourceUnreachable = DiagnosticID("CP501", "the source cannot be reached")
    public static let sourceHTTPError = DiagnosticID("CP502", "the source answered with an HTTP error")
    public static let localManifestUnreadable = DiagnosticID("CP503", "a manifest cannot be read")
    public static let unsafeManifest = DiagnosticID("CP504", "the server's manifest is refused as unsafe")
    public static let archiveMismatch = DiagnosticID("CP505", "a downloaded archive does not match the manifest")
    public static let deviceFileError = DiagnosticID("CP506", "a file on the device cannot be read or written")
    public static let otherCourse = DiagnosticID("CP507", "the source offers another course than the one installed")
    public static let unpackBudget = DiagnosticID("CP508", "the sync's budget of unpacked bytes is used up")
    public static let notATarget = DiagnosticID("CP510", "the folder is not a coursepack target")
    public static let unknownBlock = DiagnosticID("CP511", "no such block, container or course in the target")
    public static let notInstalled = DiagnosticID("CP512", "the block is not installed")
    public static let pinnedOverBudget = DiagnosticID("CP513", "the pinned content is over the storage budget")
    public static let targetLocked = DiagnosticID("CP514", "another sync into the target is running")
    public static let invalidSyncRequest = DiagnosticID("CP515", "the sync request is not valid")
    public static let invalidSearch = DiagnosticID("CP520", "the search query is not valid")
    public static let searchIndexDamaged = DiagnosticID("CP521", "the installed search index is damaged")
    public static let noSearchIndex = DiagnosticID("CP522", "no search index is installed for the course")

    static let device: [DiagnosticID] = [
        sourceUnreachable, sourceHTTPError, localManifestUnreadable, unsafeManifest, archiveMismatch, deviceFileError, otherCourse,
        unpackBudget, notATarget, unknownBlock, notInstalled, pinnedOverBudget, targetLocked, invalidSyncRequest, invalidSearch,
        searchIndexDamaged, noSearchIndex,
    ]
}
