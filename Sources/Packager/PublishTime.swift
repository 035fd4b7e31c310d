import Foundation

/// A publish time as the manifest writes it: UTC, whole seconds, ISO 8601
/// (`2026-11-22T10:00:00Z`). Any ISO 8601 time with an offset or fractional seconds is read
/// and normalised; anything else is refused, so a library caller cannot write a manifest date
/// no client can read.
public struct PublishTime: Sendable, Equatable, CustomStringConvertible {
    public let date: Date
    /// The manifest's form.
    public let text: String

    public init(_ date: Date) {
        self.date = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        text = formatter.string(from: self.date)
    }

    public init(parsing text: String) throws(BuildError) {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) {
            self.init(date)
            return
        }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) else {
            throw .invalidOption("publish time \"\(text)\" is not an ISO 8601 time such as 2026-11-22T10:00:00Z")
        }
        self.init(date)
    }

    public static func now() -> PublishTime { PublishTime(Date()) }

    public var description: String { text }
}
