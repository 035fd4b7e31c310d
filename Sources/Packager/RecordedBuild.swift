/// What a build reports again when the incremental build finds nothing to do: the same
/// counts, the same warnings, and the same errors of blocks that fail from the same inputs.
struct RecordedBuild: Codable, Sendable, Equatable {
    var courseID: String
    var blocks: Int
    var offlineFalse: Int
    var warnings: [Diagnostic]
    var failed: Int
    var errors: [Diagnostic]

    enum CodingKeys: String, CodingKey {
        case blocks, warnings, failed, errors
        case courseID = "course_id"
        case offlineFalse = "offline_false"
    }

    init(_ report: BuildReport) {
        courseID = report.courseID
        blocks = report.counts.blocks
        offlineFalse = report.counts.offlineFalse
        warnings = report.warnings
        failed = report.counts.failed
        errors = report.errors
    }

    func report(publishedAt: String, outputFolder: String) -> BuildReport {
        var report = BuildReport(courseID: courseID, publishedAt: publishedAt, outputFolder: outputFolder)
        report.counts.blocks = blocks
        report.counts.reused = blocks - offlineFalse
        report.counts.offlineFalse = offlineFalse
        report.warnings = warnings
        report.counts.failed = failed
        report.errors = errors
        report.inputsUnchanged = true
        return report
    }
}
