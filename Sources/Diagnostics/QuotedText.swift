/// A problem's message quotes what its input holds (a name, an attribute's value, a link, a
/// stylesheet's `url()`), which may be megabytes long: 20 warnings of a 500 KB reference each, in
/// each of 20 blocks, once made a 200 MB report and 400 MB of build state. Every diagnostic
/// keeps the first `limit` characters of what it quotes.
public enum QuotedText {
    public static let limit = 1000

    public static func bounded(_ text: String) -> String {
        text.utf8.count <= limit ? text : String(text.prefix(limit)) + "… (cut)"
    }
}
