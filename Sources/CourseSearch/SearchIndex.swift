import Foundation
import Manifest

/// A course's search index as published: `search/<16 hex>.zip` holding `index.js`, which assigns
/// one canonical JSON object to `window.coursepackSearchIndex`. A script element loads it in the
/// outline page (from `file://` too, where `fetch` of a local file is refused); the CLI reads
/// the same file, without the assignment around it, into SQLite's FTS5.
///
/// Documents carry their terms already split by `SearchTokenizer` (space-separated, stop words
/// left out), so the browser, the CLI and the build agree on every term whatever Unicode tables
/// each side has; the browser derives its postings from them when the page loads.
public struct SearchIndex: Codable, Sendable, Equatable {
    /// Bumped when the format or the tokenizer's rules change.
    public static let formatVersion = 1
    public static let fileName = "index.js"
    static let prefix = "window.coursepackSearchIndex = "
    static let suffix = ";\n"

    public var format: Int
    /// What the build took from the blocks, versioned apart from the format (readers ignore
    /// it): a build reuses a previous index's text of an unchanged block only when it is its own.
    public var textVersion: Int
    public var courseID: String
    /// The course's language as its export gives it; empty when not given.
    public var language: String
    /// Every leaf block with text a learner can see or a name, in course order.
    public var documents: [SearchDocument]

    public init(courseID: String, language: String, documents: [SearchDocument], textVersion: Int = 0) {
        self.format = Self.formatVersion
        self.textVersion = textVersion
        self.courseID = courseID
        self.language = language
        self.documents = documents
    }

    enum CodingKeys: String, CodingKey {
        case format
        case textVersion = "text_version"
        case courseID = "course_id"
        case language
        case documents
    }

    public var tokenizer: SearchTokenizer { SearchTokenizer(language: language) }

    /// The published file's bytes: the same index gives the same bytes (sorted keys, no
    /// floating-point numbers, no dates), those Foundation's JSONEncoder wrote before (a test
    /// holds the two together).
    public func encoded() -> [UInt8] {
        var bytes = Self.opening(courseID: courseID)
        for (number, document) in documents.enumerated() {
            if number > 0 { bytes.append(UInt8(ascii: ",")) }
            EncodedSearchDocument(document).append(to: &bytes)
        }
        bytes += Self.closing(language: language, textVersion: textVersion, format: format)
        return bytes
    }

    /// `index.js` up to its first document: the file is this, the documents separated by
    /// commas, and `closing`.
    public static func opening(courseID: String) -> [UInt8] {
        var bytes = Array(prefix.utf8) + Array("{\"course_id\":".utf8)
        JSONString.append(courseID, to: &bytes)
        bytes += Array(",\"documents\":[".utf8)
        return bytes
    }

    public static func closing(language: String, textVersion: Int, format: Int = formatVersion) -> [UInt8] {
        var bytes = Array("],\"format\":\(format),\"language\":".utf8)
        JSONString.append(language, to: &bytes)
        bytes += Array(",\"text_version\":\(textVersion)}".utf8) + Array(suffix.utf8)
        return bytes
    }

    /// Reads `index.js`; `path` names the file in the error.
    public static func decode(_ bytes: [UInt8], path: String) throws(SearchIndexError) -> SearchIndex {
        let prefix = Array(Self.prefix.utf8)
        let suffix = Array(Self.suffix.utf8)
        guard bytes.count >= prefix.count + suffix.count, bytes.starts(with: prefix), bytes.suffix(suffix.count).elementsEqual(suffix) else {
            throw .damaged(path: path, reason: "it does not start with \"\(Self.prefix)\" and end with \";\"")
        }
        let json = Data(bytes[prefix.count..<(bytes.count - suffix.count)])
        let index: SearchIndex
        do {
            index = try JSONDecoder().decode(SearchIndex.self, from: json)
        } catch {
            throw .damaged(path: path, reason: "its JSON cannot be read: \(error)")
        }
        guard index.format == formatVersion else {
            throw .damaged(path: path, reason: "format \(index.format); this coursepack reads format \(formatVersion)")
        }
        return index
    }
}

/// One block in the index.
public struct SearchDocument: Codable, Sendable, Equatable {
    public var usageID: String
    public var type: String
    /// The display name, as the outline shows it.
    public var title: String
    /// Display names of the chapter, subsection and unit holding the block, outermost first.
    public var path: [String]
    /// The page, relative to the course folder (`html/intro/index.html`); nil for a block that
    /// has no archive (online only).
    public var page: String?
    /// What a learner reads on the page, whitespace collapsed: snippets are cut from it.
    public var text: String
    /// Terms of the title, the path and the text, each space-separated in order.
    public var titleTerms: String
    public var pathTerms: String
    public var bodyTerms: String

    public init(usageID: String, type: String, title: String, path: [String], page: String?, text: String, tokenizer: SearchTokenizer) {
        self.usageID = usageID
        self.type = type
        self.title = title
        self.path = path
        self.page = page
        self.text = text
        titleTerms = tokenizer.terms(title).joined(separator: " ")
        pathTerms = tokenizer.terms(path.joined(separator: " ")).joined(separator: " ")
        bodyTerms = tokenizer.terms(text).joined(separator: " ")
    }

    /// The same text under a new name, place or page (its terms follow).
    public mutating func rename(title: String, path: [String], page: String?, tokenizer: SearchTokenizer) {
        if title != self.title {
            self.title = title
            titleTerms = tokenizer.terms(title).joined(separator: " ")
        }
        if path != self.path {
            self.path = path
            pathTerms = tokenizer.terms(path.joined(separator: " ")).joined(separator: " ")
        }
        self.page = page
    }

    enum CodingKeys: String, CodingKey {
        case usageID = "usage_id"
        case type, title, path, page, text
        case titleTerms = "title_terms"
        case pathTerms = "path_terms"
        case bodyTerms = "body_terms"
    }
}

public enum SearchIndexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The installed index cannot be used; the next sync installs it again.
    case damaged(path: String, reason: String)

    public var description: String {
        switch self {
        case .damaged(let path, let reason): "the search index \(path) is damaged: \(reason); run `coursepack sync` to repair it"
        }
    }
}
