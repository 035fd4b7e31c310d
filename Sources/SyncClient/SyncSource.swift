import Foundation

/// Where a published course comes from: an `http(s)://` base URL or a local published folder.
public enum SyncSource: Sendable, Equatable, CustomStringConvertible {
    case http(URL)
    case folder(String)

    /// A URL when `text` starts with http:// or https://, a folder otherwise. A manifest file
    /// (`…/manifest.json`) stands for the folder or URL that holds it.
    public init(_ text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://"), var url = URL(string: text) {
            if url.lastPathComponent == "manifest.json" { url.deleteLastPathComponent() }
            self = .http(url)
        } else {
            self = .folder(text.hasSuffix("/manifest.json") ? String(text.dropLast("/manifest.json".count)) : text)
        }
    }

    public var description: String {
        switch self {
        case .http(let url): return url.absoluteString
        case .folder(let path): return path
        }
    }

    /// Where `relative` (a manifest's archive path, already validated) lives in this source.
    func location(of relative: String) -> String {
        switch self {
        case .http(let url): return url.appendingPathComponent(relative).absoluteString
        case .folder(let path): return path + "/" + relative
        }
    }
}
