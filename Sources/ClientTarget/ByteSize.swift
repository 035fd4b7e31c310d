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
