import Foundation

/// How long this process has run: what a summary line reports, so that reading manifests,
/// planning and writing pages count as well as downloads.
enum ProcessClock {
    /// When the program started (a `coursepack sync` handed here by `exec` keeps its start).
    static let fallbackStart = Date()

    /// Seconds since the process started, from /proc (its start in clock ticks since boot
    /// against the uptime); elsewhere since this program first asked.
    static func secondsSinceStart() -> Double {
        if let seconds = fromProc() { return seconds }
        return Date().timeIntervalSince(fallbackStart)
    }

    private static func fromProc() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let uptime = try? String(contentsOfFile: "/proc/uptime", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            let now = uptime.split(separator: " ").first.flatMap({ Double($0) })
        else { return nil }
        // Fields after the command name start at field 3 (state); the start time is field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard fields.count > 19, let ticks = Double(fields[19]), ticksPerSecond > 0 else { return nil }
        let seconds = now - ticks / ticksPerSecond
        return seconds >= 0 ? seconds : nil
    }
}
