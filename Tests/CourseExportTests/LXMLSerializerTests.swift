@testable import CourseExport
import Testing

/// The LMS names a block without a name from lxml's serialisation of it; each expectation
/// below is what lxml (`remove_blank_text=True`, `etree.tostring`) gives for the same input.
@Suite struct LXMLSerializerTests {
    func children(_ source: String, _ output: LXMLSerializer.Output = .unicode) throws -> [String] {
        let bytes = Array(source.utf8)
        let root = try XMLTree.parse(bytes)
        return LXMLSerializer.childElements(of: root, in: bytes, output: output).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func blankTextCDATAEscapingAndAttributes() throws {
        let source = "<v>\n  <a x=\"1&#10;2\n3\t4 &lt;&gt;&amp;&quot;'\" b='é'>  </a>\n  <!-- c -->\n  <b>t &amp; &gt; ]]&gt; é</b>\n <c><![CDATA[ <x> ]]></c> <d>  <![CDATA[x]]>  </d><e>  <f/>  </e></v>"
        #expect(try children(source) == [
            "<a x=\"1&#10;2 3 4 &lt;&gt;&amp;&quot;'\" b=\"é\">  </a>", "<b>t &amp; &gt; ]]&gt; é</b>", "<c> &lt;x&gt; </c>", "<d>x  </d>", "<e><f/></e>",
        ])
    }

    @Test func namespacesInstructionsEmptyElementsAndMixedContent() throws {
        let source = #"<v><a y="1" xmlns:q="u"><q:b/><?pi  data ?></a><a><![CDATA[]]></a><a></a><h><p/>a<br/> <i>  <b/></i> </h></v>"#
        #expect(try children(source) == [#"<a xmlns:q="u" y="1"><q:b/><?pi data ?></a>"#, "<a></a>", "<a/>", "<h><p/>a<br/> <i><b/></i> </h>"])
    }

    @Test func asciiOutputAndLineEnds() throws {
        #expect(try children("<v>\r\n<a x=\"é\r\n\">é &#233;</a>\r\n</v>", .ascii) == [#"<a x="&#233; ">&#233; &#233;</a>"#])
    }

    @Test func aReusedFallbackNameLosesItsOldHash() {
        let first = BlockNaming.fallbackName(tag: "problem", taken: "same", serialized: [])
        #expect(first == "problem_same_da39a3ee5e6b", "SHA-1 of nothing starts da39a3ee5e6b")
        #expect(BlockNaming.fallbackName(tag: "problem", taken: first, serialized: []) == "problem_same__da39a3ee5e6b", "Python's slice keeps the underscore")
        #expect(BlockNaming.cleanedName("Café  crème — e\u{301}! 1") == "Café_crème_e_1")
    }
}
