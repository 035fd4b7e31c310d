import FuzzDriver
import LinkRewriter

/// Any bytes as HTML and CSS: every reference found lies inside the input, and rewriting them
/// all to a fixed string keeps every other byte.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for document in [LinkRewriter.Document.html, .css] {
        let references = LinkRewriter.references(in: bytes, as: document)
        for reference in references {
            precondition(reference.range.lowerBound >= 0 && reference.range.upperBound <= bytes.count)
            _ = LinkTarget.classify(reference.url)
        }
        let untouched = LinkRewriter.rewrite(bytes, references: references) { _ in .keep }
        precondition(untouched == bytes, "keeping every reference must give the input back")
        _ = LinkRewriter.rewrite(bytes, references: references) { _ in .replace("static/x") }
    }
    _ = HTMLScanner.elements(named: "iframe", in: bytes)
    _ = PercentEncoding.decode(String(decoding: bytes, as: UTF8.self))
    return 0
}

@_cdecl("FuzzLinks_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv) { data, size in fuzz(data, size) }
}
