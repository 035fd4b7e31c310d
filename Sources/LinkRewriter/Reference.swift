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
    /// The lowercased name of the element whose attribute holds the URL; empty outside attributes.
    public let element: String

    public init(range: Range<Int>, url: String, context: Context, element: String = "") {
        self.range = range
        self.url = url
        self.context = context
        self.element = element
    }

    /// Whether a browser fetches this URL while showing the page (an image, a script, a frame, a
    /// stylesheet, a font), as opposed to a link the learner may follow.
    public var loadsResource: Bool {
        switch context {
        case .css: return true
        case .embedded: return false
        case .attribute(let attribute):
            switch attribute {
            case "src": return Self.elementsLoadingSource.contains(element)
            case "href": return element == "link"
            case "xlink:href": return element == "image" || element == "use"
            case "data", "codebase", "archive": return element == "object" || element == "applet"
            case "poster", "background", "srcset", "imagesrcset", "lowsrc", "dynsrc": return true
            default: return false
            }
        }
    }

    static let elementsLoadingSource: Set<String> = [
        "img", "script", "iframe", "frame", "audio", "video", "source", "track", "embed", "input", "image",
    ]
}
