import FileSystem
import Foundation
import Manifest

/// A course's search index as published: `search/<16 hex>.zip` holding `index.js`, which assigns
/// one canonical JSON object to `window.coursepackSearchIndex`, and the part files it names
/// (format 2), each pushing a run of documents onto `window.coursepackSearchParts`. Script
/// elements load them in the outline page (from `file://` too, where `fetch` of a local file is
/// refused); the CLI reads the same files, without the JavaScript around them, into SQLite's FTS5.
///
/// The documents are in parts so that an edit changes one part: a part is named after its
/// content's hash, and a client that has the others downloads only it and the small `index.js`.
///
/// Documents carry their terms already split by `SearchTokenizer` (space-separated, stop words
/// left out), so the browser, the CLI and the build agree on every term whatever Unicode tables
/// each side has; the browser derives its postings from them when the page loads.
public struct SearchIndex: Codable, Sendable, Equatable {
    /// Bumped when the format or the tokenizer's rules change.
    public static let formatVersion = 2
    public static let fileName = "index.js"
    static let prefix = "window.coursepackSearchIndex = "
    static let suffix = ";\n"
    static let partPrefix = "(window.coursepackSearchParts = window.coursepackSearchParts || []).push("
    static let partSuffix = ");\n"

    public var format: Int
    /// What the build took from the blocks, versioned apart from the format (readers ignore
    /// it): a build reuses a previous index's text of an unchanged block only when it is its own.
    public var textVersion: Int
    public var courseID: String
    /// The course's language as its export gives it; empty when not given.
    public var language: String
    /// Every leaf block with text a learner can see or a name, in course order: those of
    /// `index.js` itself, then those of each part in order.
    public var documents: [SearchDocument]
    /// File names of the parts, beside `index.js`, in course order (format 2; absent in format 1,
    /// which holds every document in `index.js`).
    public var parts: [String]?

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
        case parts
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

    /// `index.js` of a split index: no documents of its own, the names of its parts.
    public static func root(courseID: String, language: String, textVersion: Int, parts: [String]) -> [UInt8] {
        var bytes = opening(courseID: courseID)
        bytes += Array("],\"format\":\(formatVersion),\"language\":".utf8)
        JSONString.append(language, to: &bytes)
        bytes += Array(",\"parts\":[".utf8)
        for (number, part) in parts.enumerated() {
            if number > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONString.append(part, to: &bytes)
        }
        bytes += Array("],\"text_version\":\(textVersion)}".utf8) + Array(suffix.utf8)
        return bytes
    }

    /// A part file up to its first document: the file is this, the documents separated by
    /// commas, and `partClosing`.
    public static let partOpening = Array(partPrefix.utf8) + Array("{\"documents\":[".utf8)
    public static let partClosing = Array("]}".utf8) + Array(partSuffix.utf8)

    /// `part-<16 hex>.js`: named after the SHA-256 of its bytes, so a changed part has a new name.
    public static func partName(sha256: String) -> String { "part-\(sha256.prefix(16)).js" }

    /// Whether `name` is a part's name as `partName` gives it: nothing else is read beside `index.js`.
    public static func isPartName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count == 24, name.hasPrefix("part-"), name.hasSuffix(".js") else { return false }
        return bytes[5..<21].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Reads an installed index: `index.js` in `folder`, then each part it names, their documents
    /// appended in order. Errors name the file.
    public static func read(folder: String) throws(SearchIndexError) -> SearchIndex {
        let path = folder + "/" + fileName
        let read: [UInt8]?
        do {
            read = try WholeFile.read(path, atMost: WholeFile.stateLimit)
        } catch {
            throw .damaged(path: path, reason: "it cannot be read: \(error.reason ?? "\(error)")")
        }
        guard let data = read else { throw .damaged(path: path, reason: "it is missing") }
        var index = try decode(data, path: path)
        for part in index.parts ?? [] {
            let partPath = folder + "/" + part
            guard isPartName(part) else { throw .damaged(path: path, reason: "it names a part \"\(part)\" that is not part-<16 hex>.js") }
            guard let bytes = WholeFile.readIfUsable(partPath, atMost: WholeFile.stateLimit) else {
                throw .damaged(path: partPath, reason: "it is missing, not a file, or larger than \(WholeFile.stateLimit) bytes")
            }
            index.documents += try decodePart(bytes, path: partPath)
        }
        return index
    }

    /// The documents of one part file.
    public static func decodePart(_ bytes: [UInt8], path: String) throws(SearchIndexError) -> [SearchDocument] {
        struct Part: Decodable { let documents: [SearchDocument] }
        let json = try unwrapped(bytes, prefix: partPrefix, suffix: partSuffix, path: path)
        do {
            return try JSONDecoder().decode(Part.self, from: json).documents
        } catch {
            throw .damaged(path: path, reason: "its JSON cannot be read: \(error)")
        }
    }

    static func unwrapped(_ bytes: [UInt8], prefix: String, suffix: String, path: String) throws(SearchIndexError) -> Data {
        let (head, tail) = (Array(prefix.utf8), Array(suffix.utf8))
        guard bytes.count >= head.count + tail.count, bytes.starts(with: head), bytes.suffix(tail.count).elementsEqual(tail) else {
            throw .damaged(path: path, reason: "it does not start with \"\(prefix)\" and end with \"\(suffix.trimmingCharacters(in: .newlines))\"")
        }
        return Data(bytes[head.count..<(bytes.count - tail.count)])
    }

    /// Reads `index.js` (its own documents only; `read(folder:)` adds the parts'); `path` names
    /// the file in the error. Format 1 and 2 are read.
    public static func decode(_ bytes: [UInt8], path: String) throws(SearchIndexError) -> SearchIndex {
        let json = try unwrapped(bytes, prefix: prefix, suffix: suffix, path: path)
        let index: SearchIndex
        do {
            index = try JSONDecoder().decode(SearchIndex.self, from: json)
        } catch {
            throw .damaged(path: path, reason: "its JSON cannot be read: \(error)")
        }
        guard (1...formatVersion).contains(index.format) else {
            throw .damaged(path: path, reason: "format \(index.format); this coursepack reads formats 1 to \(formatVersion)")
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
        titleTerms = tokenizer.joinedTerms(title)
        pathTerms = tokenizer.joinedTerms(path.joined(separator: " "))
        bodyTerms = tokenizer.joinedTerms(text)
    }

    /// The same text under a new name, place or page (its terms follow).
    public mutating func rename(title: String, path: [String], page: String?, tokenizer: SearchTokenizer) {
        if title != self.title {
            self.title = title
            titleTerms = tokenizer.joinedTerms(title)
        }
        if path != self.path {
            self.path = path
            pathTerms = tokenizer.joinedTerms(path.joined(separator: " "))
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
