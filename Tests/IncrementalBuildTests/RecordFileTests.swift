import Foundation
import IncrementalBuild
import Testing
import TestSupport

@Suite struct RecordFileTests {
    /// Records come back as written; a file damaged anywhere, cut short or of another format
    /// reads as no records, so the cache it held is rebuilt rather than trusted.
    /// A file reserves what its records take plus the checksum, so that neither adding them nor
    /// sealing it copies the buffer (the largest is 41 MB at 100,000 blocks, at the build's
    /// peak of memory): the size `recordSize` gives is what `add` appends, exactly.
    @Test func recordSizeIsWhatARecordTakes() throws {
        let records: [[[UInt8]]] = [[Array("one".utf8), []], [Array(repeating: 7, count: 300)], [], [Array(repeating: 1, count: 70_000), [2]]]
        let size = records.reduce(0) { $0 + RecordFile.recordSize(fieldLengths: $1.map(\.count)) }
        var file = RecordFile(format: "test-v1", capacity: size)
        let start = file.bytes.count
        let reserved = file.bytes.capacity
        for record in records { file.add(record.map { $0[...] }) }
        #expect(file.bytes.count - start == size)
        #expect(file.bytes.capacity == reserved, "no record outgrew the reservation")
        let path = TestSupport.temporaryFolder("records") + "/sized.bin"
        file.save(to: path, synced: false)
        #expect(try #require(RecordFile.load(path, format: "test-v1")).map { $0.map(Array.init) } == records)
    }

    @Test func recordsRoundTripAndAnyDamageReadsAsNone() throws {
        let path = TestSupport.temporaryFolder("records") + "/cache.bin"
        var file = RecordFile(format: "test-v1")
        let records: [[[UInt8]]] = [[Array("one".utf8), []], [Array(repeating: 7, count: 300)], []]
        for record in records { file.add(record.map { $0[...] }) }
        file.save(to: path, synced: true)
        let read = try #require(RecordFile.load(path, format: "test-v1"))
        #expect(read.map { $0.map(Array.init) } == records)
        #expect(RecordFile.load(path, format: "test-v2") == nil)

        let good = TestSupport.read(path)
        var random = SeededGenerator(state: 5)
        for _ in 0..<200 {
            var damaged = good
            let index = Int.random(in: 0..<damaged.count, using: &random)
            damaged[index] ^= UInt8.random(in: 1...255, using: &random)
            try TestSupport.writeBytes(damaged, to: path)
            #expect(RecordFile.load(path, format: "test-v1") == nil, "byte \(index) flipped")
        }
        try TestSupport.writeBytes(Array(good.dropLast(1)), to: path)
        #expect(RecordFile.load(path, format: "test-v1") == nil)
    }
}
