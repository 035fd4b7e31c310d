import Foundation

/// The time since the last lap, for a report's phase durations.
struct PhaseClock {
    private var last: Date

    init(from start: Date) {
        last = start
    }

    mutating func lap() -> Double {
        let now = Date()
        defer { last = now }
        return now.timeIntervalSince(last)
    }
}
