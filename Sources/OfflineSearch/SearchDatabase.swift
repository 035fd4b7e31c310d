import CourseSearch
import Foundation
import GRDB

/// A course's search index in SQLite's FTS5, built on the device from the installed
/// `index.js` (the published bytes stay deterministic; a database file would not be) and kept
/// beside the course's sync state, named by the index's content hash. Documents go in as their
/// published terms joined by spaces, with a tokenizer that only splits at spaces, so FTS5's
/// terms are exactly `SearchTokenizer`'s and its `bm25()` ranks as the outline page does.
struct SearchDatabase {
    /// Every letter, digit and mark category is part of a term: FTS5 splits only at the spaces
    /// between the published terms, and folds nothing they do not already have folded.
    static let tokenizer = "unicode61 remove_diacritics 0 categories 'L* N* Co Mc Mn Me'"

    let queue: DatabaseQueue

    /// Opens the database at `path`, building it first when it is missing, unreadable or not
    /// the one of `index` (a damaged cache is rebuilt, never reported: the index is the truth).
    static func open(at path: String, for index: SearchIndex, contentHash: String) throws -> SearchDatabase {
        if let existing = try? DatabaseQueue(path: path, configuration: readOnly()),
            (try? existing.read({ try String.fetchOne($0, sql: "SELECT value FROM meta WHERE key = 'content_hash'") })) == contentHash,
            (try? existing.read({ try Int.fetchOne($0, sql: "SELECT count(*) FROM documents") })) == index.documents.count
        {
            return SearchDatabase(queue: existing)
        }
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(temporary) }
        do {
            let building = try DatabaseQueue(path: temporary)
            try building.write { db in
                try db.execute(sql: "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                try db.execute(sql: "INSERT INTO meta VALUES ('content_hash', ?)", arguments: [contentHash])
                try db.execute(sql: "CREATE VIRTUAL TABLE documents USING fts5(title, path, body, tokenize = \"\(tokenizer)\")")
                for (number, document) in index.documents.enumerated() {
                    try db.execute(
                        sql: "INSERT INTO documents(rowid, title, path, body) VALUES (?, ?, ?, ?)",
                        arguments: [number + 1, document.titleTerms, document.pathTerms, document.bodyTerms])
                }
            }
            try building.close()
        }
        guard rename(temporary, path) == 0 else { throw SearchDatabaseError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        return SearchDatabase(queue: try DatabaseQueue(path: path, configuration: readOnly()))
    }

    static func readOnly() -> Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        return configuration
    }

    /// Documents holding every phrase, best first: (position in the index, BM25 score, higher
    /// is better).
    func search(_ query: SearchQuery, limit: Int) throws -> [(document: Int, score: Double)] {
        // Terms hold only letters, digits and marks: quoting them is all FTS5's syntax needs.
        let match = query.phrases.map { "\"" + $0.joined(separator: " ") + "\"" }.joined(separator: " AND ")
        let sql = """
            SELECT rowid, bm25(documents, \(SearchRanking.titleWeight), \(SearchRanking.pathWeight), \(SearchRanking.bodyWeight)) AS rank
            FROM documents WHERE documents MATCH ? ORDER BY rank, rowid LIMIT ?
            """
        return try queue.read { db in
            try Row.fetchAll(db, sql: sql, arguments: [match, limit]).map { row in
                (document: (row[0] as Int) - 1, score: -(row[1] as Double))
            }
        }
    }
}

enum SearchDatabaseError: Error, CustomStringConvertible {
    case cannotWrite(path: String, reason: String)

    var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot write the search database \(path): \(reason)"
        }
    }
}
