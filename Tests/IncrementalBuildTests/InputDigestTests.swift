import FileSystem
import IncrementalBuild
import Testing

/// A digest is what every memo and cache of the build is keyed by: however the fields are fed
/// to the hash, it must be the SHA-256 of each field's length (8 bytes, little-endian) and
/// bytes, in order, or every build after a change to it renders the whole course again.
@Suite struct InputDigestTests {
    @Test func aDigestIsTheSHA256OfItsLengthPrefixedFields() {
        var generator = SeededFields(state: 7)
        for round in 0..<40 {
            // Empty fields, a few bytes, and fields past the kilobyte gathered before hashing.
            let fields = (0..<(round % 9 + 1)).map { _ in generator.field() }
            var digest = InputDigest("purpose")
            var stream: [UInt8] = []
            func prefixed(_ bytes: [UInt8]) -> [UInt8] {
                withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { Array($0) } + bytes
            }
            stream += prefixed(Array("purpose".utf8))
            for (index, field) in fields.enumerated() {
                if index % 2 == 0 {
                    digest.add(bytes: field)
                } else {
                    digest.add(String(decoding: field, as: UTF8.self))
                }
                stream += prefixed(index % 2 == 0 ? field : Array(String(decoding: field, as: UTF8.self).utf8))
            }
            #expect(digest.finish() == SHA256Hex.of(stream), "round \(round): fields of \(fields.map(\.count)) bytes")
            // Finishing does not end the digest: more fields may follow.
            digest.add("more")
            #expect(digest.finish() == SHA256Hex.of(stream + prefixed(Array("more".utf8))))
        }
    }

    struct SeededFields {
        var state: UInt64

        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }

        mutating func field() -> [UInt8] {
            let sizes = [0, 1, 7, 60, 900, 1_017, 1_024, 3_000, 70_000]
            let size = sizes[Int(next() % UInt64(sizes.count))]
            return (0..<size).map { _ in UInt8(ascii: "a") + UInt8(next() % 26) }
        }
    }
}
