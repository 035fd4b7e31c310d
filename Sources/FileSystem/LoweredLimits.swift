#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one hook that lowers the limits builder and client share:
/// `COURSEPACK_LOWER_LIMITS=entries=N,total=N,ratio=N,manifest=N,split=N,file=N`. Each module
/// that owns some of the limits (`ArchiveLimits`, `ManifestLimits`) reads its names from here,
/// so tests reach a limit without building gigabytes, on both sides alike. A limit is only ever
/// lowered, never raised.
public enum LoweredLimits {
    /// The value given for `name`, nil when none (or not a number) is.
    public static func value(of name: String) -> UInt64? {
        guard let raw = getenv("COURSEPACK_LOWER_LIMITS") else { return nil }
        for pair in String(cString: raw).split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == name, let value = UInt64(parts[1]) else { continue }
            return value
        }
        return nil
    }

    /// `limit`, lowered to the value given for `name` when that is smaller.
    public static func lowered<Value: BinaryInteger>(_ limit: Value, by name: String) -> Value {
        guard let value = value(of: name) else { return limit }
        return min(limit, Value(clamping: value))
    }
}
