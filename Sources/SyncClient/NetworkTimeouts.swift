import Foundation

/// How long a request may wait: for the server to answer at all (connection and response
/// headers), and between two pieces of data once it answers. A server that stops sending holds
/// no sync forever.
public struct NetworkTimeouts: Sendable, Equatable {
    public var connect: Double
    public var idle: Double
    /// An archive's transfer must average at least this many bytes a second: a server trickling
    /// one byte every few seconds (never idle long enough to time out) cannot hold a sync for hours.
    public var minimumBytesPerSecond: Double

    public init(connect: Double = 15, idle: Double = 30, minimumBytesPerSecond: Double = 16_384) {
        self.connect = connect
        self.idle = idle
        self.minimumBytesPerSecond = minimumBytesPerSecond
    }

    /// Bytes a transfer must have received `elapsed` seconds after it started: nothing during
    /// the time to answer and one idle spell, then the minimum speed. A transfer whose size is
    /// not known ahead (a manifest, read up to its limit) is held to the speed as it goes, not
    /// only by a deadline reckoned from the limit.
    func minimumBytes(after elapsed: Double) -> Double {
        max(0, elapsed - connect - idle) * max(minimumBytesPerSecond, 1)
    }

    /// The whole transfer of `bytes`: time to answer, time at the minimum speed, and one idle spell.
    func deadline(for bytes: UInt64) -> Double {
        connect + idle + Double(bytes) / max(minimumBytesPerSecond, 1)
    }
}
