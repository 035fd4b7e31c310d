// CP4xx: publishing (StoragePublisher)
extension DiagnosticID {
    public static let localPublishIncomplete = DiagnosticID("CP401", "the built folder is not a complete publish")
    public static let storageDenied = DiagnosticID("CP402", "the storage refused the credentials")
    public static let bucketMissing = DiagnosticID("CP403", "the bucket does not exist")
    public static let storageFailed = DiagnosticID("CP404", "the storage failed a request")
    public static let storageUnreachable = DiagnosticID("CP405", "the storage cannot be reached")
    public static let localFileUnreadable = DiagnosticID("CP406", "a local file cannot be read for the publish")
    public static let targetHoldsOtherCourse = DiagnosticID("CP407", "the target holds another course's publish")

    static let publishing: [DiagnosticID] = [
        localPublishIncomplete, storageDenied, bucketMissing, storageFailed, storageUnreachable, localFileUnreadable,
        targetHoldsOtherCourse,
    ]
}
