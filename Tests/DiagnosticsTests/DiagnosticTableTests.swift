import Diagnostics
import Foundation
import Testing

@Suite struct DiagnosticTableTests {
    static let docs = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/diagnostics.md")

    /// The rows of the table in docs/diagnostics.md, by id: its summary column.
    static func documentedRows() throws -> [String: [String]] {
        let text = try String(contentsOf: docs, encoding: .utf8)
        var rows: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| CP") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            rows[cells[1], default: []].append(cells[2])
        }
        return rows
    }

    @Test func everyIdIsWellFormedAndUsedOnce() {
        let codes = DiagnosticID.all.map(\.code)
        #expect(Set(codes).count == codes.count, "an id is listed twice: \(codes)")
        for code in codes {
            #expect(code.wholeMatch(of: /CP[1-9][0-9][0-9]/) != nil, "\(code) is not CP and three digits")
        }
    }

    @Test func theDocsTableListsEachIdOnceWithItsSummary() throws {
        let rows = try Self.documentedRows()
        for id in DiagnosticID.all {
            #expect(rows[id.code] == [id.summary], "docs/diagnostics.md: \(id.code) should have one row with summary \"\(id.summary)\", has \(rows[id.code] ?? [])")
        }
        let unknown = Set(rows.keys).subtracting(DiagnosticID.all.map(\.code))
        #expect(unknown.isEmpty, "docs/diagnostics.md lists ids the code does not have: \(unknown.sorted())")
    }

    @Test func aCommandLineLabelCarriesTheId() {
        struct Refusal: Error, Diagnosable { var diagnosticID: DiagnosticID { .badUsage } }
        #expect(DiagnosticID.label("error", for: Refusal()) == "error[CP901]")
        #expect(DiagnosticID.label("error", for: CocoaError(.fileNoSuchFile)) == "error")
    }
}
