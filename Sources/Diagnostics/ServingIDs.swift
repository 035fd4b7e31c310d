// CP6xx: serve and the LMS (CourseServer, the LMS client)
extension DiagnosticID {
    public static let cannotServe = DiagnosticID("CP601", "the folder cannot be served")
    public static let invalidLMSURL = DiagnosticID("CP610", "the LMS URL is not valid")
    public static let insecureLMS = DiagnosticID("CP611", "credentials would cross the network in plain http")
    public static let outboxUnwritable = DiagnosticID("CP612", "an answer cannot be recorded in the outbox")
    public static let invalidAnswer = DiagnosticID("CP613", "the answer cannot be kept")
    public static let outboxFull = DiagnosticID("CP614", "the outbox is full")
    public static let invalidOpaqueKey = DiagnosticID("CP615", "an id is not an opaque key of the course")
    public static let lmsSignInRequired = DiagnosticID("CP616", "the LMS refused the credentials")
    public static let answersNotSent = DiagnosticID("CP617", "the answers could not be sent")
    public static let completionsRefused = DiagnosticID("CP618", "the LMS refused the completions")
    public static let eventsNotSent = DiagnosticID("CP619", "the learner events could not be sent")
    public static let notEnrolled = DiagnosticID("CP620", "the LMS says the learner is not enrolled in the course")
    public static let blocksOutdated = DiagnosticID("CP621", "blocks changed on the LMS since they were downloaded")

    static let serving: [DiagnosticID] = [
        cannotServe, invalidLMSURL, insecureLMS, outboxUnwritable, invalidAnswer, outboxFull, invalidOpaqueKey, lmsSignInRequired,
        answersNotSent, completionsRefused, eventsNotSent, notEnrolled, blocksOutdated,
    ]
}
