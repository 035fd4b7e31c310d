/// The course's static files and every name a page may use for them: the path under `static/`,
/// the names Studio lists in `policies/assets.json`, and Studio's cleaned names.
public struct StaticIndex: Sendable {
    /// Paths relative to `static/`, e.g. `images/Learning Goals.pdf`.
    public let paths: Set<String>
    private let byAssetKey: [String: String]
    private let byCleanedName: [String: String]

    public init(paths: [String], assetsJSON: [String: AssetRecord]) {
        let set = Set(paths)
        self.paths = set
        var cleaned: [String: String] = [:]
        for path in paths.sorted() {
            let key = Self.cleanedName(path)
            if cleaned[key] == nil { cleaned[key] = path }
        }
        byCleanedName = cleaned
        var keys: [String: String] = [:]
        for (key, record) in assetsJSON {
            let candidates = [record.importPath, record.displayName, key].compactMap { $0 }
            if let hit = candidates.first(where: { set.contains($0) }) ?? candidates.lazy.compactMap({ cleaned[Self.cleanedName($0)] }).first {
                keys[key] = hit
            }
        }
        byAssetKey = keys
    }

    /// macOS's `._NAME` resource-fork files, which the LMS import skips: not course files.
    public static func isAppleDouble(_ path: String) -> Bool {
        (path.split(separator: "/").last ?? "").hasPrefix("._")
    }

    /// Studio serves a file under this name: `/` and anything outside `[A-Za-z0-9._%-]` become `_`.
    public static func cleanedName(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "%", "-": return scalar
            default: return "_"
            }
        }))
    }

    /// The path under `static/` that `name` (already percent-decoded) refers to.
    public func resolve(_ name: String) -> String? {
        if paths.contains(name) { return name }
        if let hit = byAssetKey[name] { return hit }
        return byCleanedName[Self.cleanedName(name)]
    }
}

/// The fields of a `policies/assets.json` record that name the file.
public struct AssetRecord: Sendable, Decodable {
    public let displayName: String?
    public let importPath: String?

    enum CodingKeys: String, CodingKey {
        case displayName = "displayname"
        case importPath = "import_path"
    }
}
