/// A random value made for one run of `serve`, put into every page it serves and required on
/// every answer posted: another site's page cannot read it (the same-origin policy keeps our
/// pages' text from it), so it cannot post answers in the learner's name.
public struct ServeSecret: Sendable, Equatable {
    public let hex: String

    /// 32 bytes from the system's generator (getrandom on Linux).
    public init() {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<4 {
            let word = String(generator.next() as UInt64, radix: 16)
            text += String(repeating: "0", count: 16 - word.count) + word
        }
        hex = text
    }

    init(hex: String) { self.hex = hex }

    /// Compares in time that depends only on the lengths, so response times do not tell an
    /// attacker how much of a guess was right.
    public func matches(_ candidate: String?) -> Bool {
        guard let candidate else { return false }
        let given = Array(candidate.utf8)
        let expected = Array(hex.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }

    /// The element pages carry it in; the page script reads it from there.
    public static let metaName = "coursepack-serve-secret"
    /// The header the page script sends it back in.
    public static let headerName = "X-Coursepack-Secret"

    var metaTag: String { "<meta name=\"\(Self.metaName)\" content=\"\(hex)\">" }
}
