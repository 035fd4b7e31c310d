/// A URL found in a page or stylesheet: where its bytes are, and what it says.
public struct Reference: Sendable, Equatable {
    public enum Context: Sendable, Equatable {
        /// The whole value of a URL attribute (`src`, `href`, …) or one `srcset` candidate.
        case attribute(String)
        /// `url(...)` or `@import` in CSS, in a `<style>` block, a `style` attribute or a .css file.
        case css
        /// A course path spotted inside script, JSON or another attribute's text.
        case embedded
    }

    /// Byte range of the URL as written in the source.
    public let range: Range<Int>
    /// The URL with HTML character references decoded (what a browser would request).
    public let url: String
    public let context: Context
}
