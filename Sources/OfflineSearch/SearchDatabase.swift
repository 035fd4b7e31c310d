import Diagnostics
import CourseSearch
import Foundation
import GRDB

/// A course's search index in SQLite's FTS5, built on the device from the installed
/// `index.js` (the published bytes stay deterministic; a database file would not be) and kept
/// beside the course's sync state, named by the index's content hash. Documents go in as their
/// published terms joined by spaces, with a tokenizer that only splits at spaces, so FTS5's
/// terms are exactly `SearchTokenizer`'s and its `bm25()` ranks as the outline page does. What a
/// result shows (title, path, page, text) is stored beside them, so a query reads the database
/// only, not the index file.
struct SearchDatabase {
    /// Every letter, digit and mark category is part of a term: FTS5 splits only at the spaces
    /// between the published terms, and folds nothing they do not already have folded.
    static let tokenizer = "unicode61 remove_diacritics 0 categories 'L* N* Co Mc Mn Me'"

    let queue: DatabaseQueue

    struct Document {
        var usageID: String
        var type: String
        var title: String
        var path: [String]
        var page: String?
        var text: String
    }

    /// The database at `path`, nil when there is none, it cannot be read, or it is damaged
    /// (`isIntact`): the caller then builds it again from the installed index.
    static func existing(at path: String) -> SearchDatabase? {
        guard access(path, R_OK) == 0, let queue = try? DatabaseQueue(path: path) else { return nil }
        let database = SearchDatabase(queue: queue)
        guard database.isIntact() else {
            try? queue.close()
            return nil
        }
        return database
    }

    /// Whether SQLite finds the file sound (`quick_check`: pages, b-trees, records) and FTS5
    /// finds its index in agreement with its stored terms (`integrity-check`), with every table
    /// a query reads there. A damaged file can otherwise answer some queries and fail or lie on
    /// others; it costs a few milliseconds for a course's index.
    func isIntact() -> Bool {
        (try? queue.writeWithoutTransaction { db -> Bool in
            guard try String.fetchOne(db, sql: "PRAGMA quick_check") == "ok" else { return false }
            for table in ["meta", "documents", "terms"] where try !db.tableExists(table) { return false }
            try db.execute(sql: "INSERT INTO terms(terms) VALUES ('integrity-check')")
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM documents")
            return true
        }) ?? false
    }

    /// Builds the database of `index` at `path` (through a temporary file and a rename), with
    /// `meta` recorded beside it.
    static func build(at path: String, from index: SearchIndex, meta: [String: String]) throws -> SearchDatabase {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(temporary) }
        let building = try DatabaseQueue(path: temporary)
        try building.write { db in
            try db.execute(sql: "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            for (key, value) in meta.sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "INSERT INTO meta VALUES (?, ?)", arguments: [key, value])
            }
            try db.execute(sql: "INSERT INTO meta VALUES ('language', ?)", arguments: [index.language])
            try db.execute(sql: "CREATE VIRTUAL TABLE terms USING fts5(title, path, body, tokenize = \"\(tokenizer)\")")
            try db.execute(sql: "CREATE TABLE documents(id INTEGER PRIMARY KEY, usage_id TEXT, type TEXT, title TEXT, path TEXT, page TEXT, text TEXT)")
            for (number, document) in index.documents.enumerated() {
                try db.execute(
                    sql: "INSERT INTO terms(rowid, title, path, body) VALUES (?, ?, ?, ?)",
                    arguments: [number + 1, document.titleTerms, document.pathTerms, document.bodyTerms])
                let path = String(decoding: try JSONEncoder().encode(document.path), as: UTF8.self)
                try db.execute(
                    sql: "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [number + 1, document.usageID, document.type, document.title, path, document.page, document.text])
            }
        }
        try building.close()
        // A journal left beside a damaged database would be played back into the new one.
        for suffix in ["-journal", "-wal", "-shm"] { unlink(path + suffix) }
        guard rename(temporary, path) == 0 else { throw SearchDatabaseError.cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        return SearchDatabase(queue: try DatabaseQueue(path: path))
    }

    /// Everything recorded with the database (`language` and what its builder gave).
    func meta() throws -> [String: String] {
        try queue.read { db in
            Dictionary(try Row.fetchAll(db, sql: "SELECT key, value FROM meta").map { ($0[0], $0[1]) }, uniquingKeysWith: { first, _ in first })
        }
    }

    func record(_ key: String, _ value: String) throws {
        try queue.write { try $0.execute(sql: "INSERT OR REPLACE INTO meta VALUES (?, ?)", arguments: [key, value]) }
    }

    /// Documents holding every phrase, best first, with their BM25 score (higher is better).
    func search(_ query: SearchQuery, limit: Int) throws -> [(document: Document, score: Double)] {
        // Terms hold only letters, digits and marks: quoting them is all FTS5's syntax needs.
        let match = query.phrases.map { "\"" + $0.joined(separator: " ") + "\"" }.joined(separator: " AND ")
        let sql = """
            SELECT d.usage_id, d.type, d.title, d.path, d.page, d.text,
                   bm25(terms, \(SearchRanking.titleWeight), \(SearchRanking.pathWeight), \(SearchRanking.bodyWeight)) AS rank
            FROM terms JOIN documents d ON d.id = terms.rowid
            WHERE terms MATCH ? ORDER BY rank, terms.rowid LIMIT ?
            """
        return try queue.read { db in
            try Row.fetchAll(db, sql: sql, arguments: [match, limit]).map { row in
                let path: String = row[3]
                let document = Document(
                    usageID: row[0], type: row[1], title: row[2], path: (try? JSONDecoder().decode([String].self, from: Data(path.utf8))) ?? [],
                    page: row[4], text: row[5])
                return (document, -(row[6] as Double))
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

extension SearchDatabaseError: Diagnosable {
    var diagnosticID: DiagnosticID { .deviceFileError }
}
