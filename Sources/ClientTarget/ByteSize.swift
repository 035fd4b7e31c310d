import Foundation

/// Sizes as people write them: `200MB`, `1.5GB`, `500k`, `1048576`; decimal units (kB = 1000),
/// binary ones with an i (MiB = 1048576).
public enum ByteSize {
    public static func parse(_ text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        guard !digits.isEmpty, let number = Double(digits), number >= 0 else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let units: [String: Double] = [
            "": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
            "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
        ]
        guard let factor = units[unit] else { return nil }
        let bytes = (number * factor).rounded(.down)
        guard bytes < 1.8e19 else { return nil }
        return UInt64(bytes)
    }
}

/// Periods as people write them: `30d`, `12h`, `90m`, `2w`, `3600` (seconds), `3600s`.
public enum Period {
    /// Seconds; nil when `text` is not a period of at least one second.
    public static func parse(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        guard !digits.isEmpty, let number = Double(digits) else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let units: [String: Double] = ["": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86_400, "w": 604_800]
        guard let factor = units[unit], number * factor >= 1, number * factor < 1e12 else { return nil }
        return number * factor
    }
}
