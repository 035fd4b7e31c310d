import ClientTarget
import Foundation
import OfflineSearch
import Testing
import TestSupport

/// search.sqlite is a cache the device builds from the installed index: damaged in any way, it
/// is found at open (or when a query fails) and built again, and queries answer as before
/// (issue 29, finding 12).
@Suite(.serialized) struct SearchDatabaseDamageTests {
    enum Damage: String, CaseIterable, Sendable {
        case truncated, randomBytesInTheMiddle, notSQLite, missingFTSTable, damagedFTSIndex, emptyFile
    }

    static func damage(_ path: String, _ damage: Damage) throws {
        var bytes = TestSupport.read(path)
        var rng = SystemRandomNumberGenerator()
        switch damage {
        case .truncated:
            try TestSupport.writeBytes(Array(bytes.prefix(bytes.count / 2)), to: path)
        case .randomBytesInTheMiddle:
            // Past the first page (the header), every page of a small database is in use.
            for offset in (bytes.count / 2)..<min(bytes.count, bytes.count / 2 + 2048) { bytes[offset] = UInt8.random(in: 0...255, using: &rng) }
            try TestSupport.writeBytes(bytes, to: path)
        case .notSQLite:
            try TestSupport.writeBytes(Array(repeating: 0x41, count: bytes.count), to: path)
        case .emptyFile:
            try TestSupport.writeBytes([], to: path)
        case .missingFTSTable, .damagedFTSIndex:
            let sql = damage == .missingFTSTable ? "DROP TABLE terms" : "DELETE FROM terms_data WHERE id > 10"
            let python = try #require(TestSupport.which("python3"))
            let run = try TestSupport.run(python, ["-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()", path, sql])
            #expect(run.status == 0, "\(run.stderr)")
        }
    }

    /// SQLite's and FTS5's own checks, from outside the code under test.
    static func isSound(_ path: String) throws -> Bool {
        let python = try #require(TestSupport.which("python3"))
        let script = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            c.execute("INSERT INTO terms(terms) VALUES ('integrity-check')")
            print("sound")
            """
        return try TestSupport.run(python, ["-c", script, path]).stdout.contains("sound")
    }

    @Test(arguments: Damage.allCases)
    func aDamagedDatabaseIsRebuiltAndAnswersAsBefore(damage: Damage) async throws {
        let target = try await syncedTarget(from: try build(try courseWithPlantedAnswers()))
        let search = TargetSearch(target: target)
        let queries = ["Danube", "rivers", "Freedonia", #""Danube flows""#]
        let before = try queries.map { try search.search($0).map(\.usageID) }
        #expect(before.allSatisfy { !$0.isEmpty })
        let database = target.root + "/Org+Num+run1/.coursepack-sync/search.sqlite"
        #expect(try Self.isSound(database))
        try Self.damage(database, damage)
        #expect(try !Self.isSound(database), "the damage is real")

        #expect(try queries.map { try search.search($0).map(\.usageID) } == before)
        #expect(try Self.isSound(database), "rebuilt")
        let command = try TestSupport.coursepack(["search", target.root, "Danube"])
        #expect(command.status == 0, "\(command.stderr)")
    }
}
