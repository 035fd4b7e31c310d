import Foundation

/// Where `--to` points: `s3://bucket/prefix`, or a local folder (a web root, an NFS mount).
public enum PublishTarget: Sendable, Equatable {
    case s3(bucket: String, prefix: String)
    case folder(String)

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public static func parse(_ text: String) throws(Invalid) -> PublishTarget {
        guard text.hasPrefix("s3://") else {
            guard !text.contains("://") else { throw Invalid(description: "--to \(text): only s3:// URLs and local folders are publish targets") }
            return .folder(text)
        }
        let rest = text.dropFirst("s3://".count)
        let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let bucket = String(parts.first ?? "")
        // S3's bucket naming rules: 3-63 of a-z 0-9 . -
        guard (3...63).contains(bucket.count), bucket.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "." || $0 == "-" }), bucket.allSatisfy(\.isASCII) else {
            throw Invalid(description: "--to \(text): \"\(bucket)\" is not a valid S3 bucket name")
        }
        let prefix = parts.count > 1 ? parts[1].split(separator: "/").joined(separator: "/") : ""
        guard PublishKeys.isSafe(prefix + "/x") || prefix.isEmpty else { throw Invalid(description: "--to \(text): the prefix has empty, . or .. segments") }
        return .s3(bucket: bucket, prefix: prefix)
    }

    /// `24h`, `30m`, `90s`, `2d`, or seconds; a finite number of them (`inf`, `1e400s` are not).
    public static func duration(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let seconds: Double?
        if let unit = text.last, let factor = units[unit], let value = Double(text.dropLast()) {
            seconds = value * factor
        } else {
            seconds = Double(text)
        }
        guard let seconds, seconds.isFinite, seconds >= 0 else { return nil }
        return seconds
    }

    /// `64MiB`, `5MB`, `1KiB`, or bytes.
    public static func size(_ text: String) -> UInt64? {
        let units: [(String, UInt64)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let count = UInt64(text.dropLast(suffix.count)) else { return nil }
            let (bytes, overflow) = count.multipliedReportingOverflow(by: factor)
            return overflow ? nil : bytes
        }
        return UInt64(text)
    }
}
