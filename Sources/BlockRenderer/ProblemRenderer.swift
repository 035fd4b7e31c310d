import CourseExport
import Foundation

/// Renders a CAPA problem as an accessible form a learner fills in offline. The answers stay
/// in the page (localStorage) for an online step to submit. Nothing that reveals an answer is
/// ever written: no `correct` flags, solutions, hints, answer scripts or explanations.
struct ProblemRenderer {
    /// Elements whose content gives answers away or only runs on the server.
    static let answerElements: Set<String> = [
        "solution", "answer", "script", "choicehint", "hint", "hintgroup", "demandhint", "hintpart",
        "correcthint", "stringequalhint", "numerichint", "optionhint", "additional_answer",
        "responseparam", "compoundhint", "correctness", "explanation", "solutionset", "answer_display",
    ]

    /// Response types that need the server (or custom JavaScript) to be shown faithfully.
    static let unsupportedResponses: [String: String] = [
        "customresponse": "custom Python-graded problems need the server",
        "jsinput": "JavaScript input problems need their online grader",
        "drag_and_drop_input": "drag and drop problems need the server",
        "coderesponse": "code problems are graded online",
        "schematicresponse": "circuit schematic problems need the server",
        "imageresponse": "image region problems are not rendered offline",
        "symbolicresponse": "symbolic math problems are graded online",
        "annotationresponse": "annotation problems need the server",
        "externalresponse": "externally graded problems need the server",
        "javascriptresponse": "JavaScript problems need their online grader",
        "chemicalequationinput": "chemical equation input needs the server",
        "crystallography": "crystallography input needs the server",
        "vsepr_input": "molecular geometry input needs the server",
        "editamoleculeinput": "molecule editor input needs the server",
        "designprotein2dinput": "protein designer input needs the server",
        "editageneinput": "gene editor input needs the server",
        "schematic": "circuit schematic problems need the server",
    ]

    static let responseTypes: Set<String> = [
        "multiplechoiceresponse", "choiceresponse", "optionresponse", "stringresponse", "numericalresponse", "formularesponse",
    ]

    let block: Block

    enum Outcome {
        case html(String)
        case onlineOnly(String)
    }

    func render() -> Outcome {
        if let reason = unsupportedReason(block.definition) { return .onlineOnly(reason) }
        if usesScriptVariables(block.definition) {
            return .onlineOnly("the problem shows values its Python script computes on the server")
        }
        var counter = 0
        let body = Self.mathDelimiters(renderNodes(block.definition.children, counter: &counter))
        guard counter > 0 else { return .onlineOnly("this problem has no question coursepack can show offline") }
        let key = HTMLText.escape("coursepack:" + block.usageID)
        let usageID = HTMLText.escape(block.usageID)
        return .html("""
            <form class="coursepack-problem" data-storage-key="\(key)" data-usage-id="\(usageID)">
            \(body)
            <p class="coursepack-actions"><button type="submit" class="coursepack-submit">Submit</button></p>
            <p class="coursepack-answer-status" role="status" aria-live="polite"></p>
            <p class="coursepack-online-only" role="note">Answers are kept on this device and sent to the course when you are online.</p>
            </form>
            <script src="\(Self.scriptFileName)"></script>
            """)
    }

    /// The form's and the state's scripts, in one file beside every problem's page: the same
    /// bytes in every problem, so a publish stores and a device downloads them once.
    static let scriptFileName = "coursepack-problem.js"
    static let scriptFile = Array((formScript + "\n" + stateScript + "\n").utf8)

    /// CAPA writes `[mathjax]…[/mathjax]` and `[mathjaxinline]…[/mathjaxinline]` for display and
    /// inline math; the page's math renderer reads the standard TeX delimiters.
    static func mathDelimiters(_ html: String) -> String {
        guard html.contains("[mathjax") else { return html }
        return html.replacingOccurrences(of: "[mathjaxinline]", with: "\\(").replacingOccurrences(of: "[/mathjaxinline]", with: "\\)")
            .replacingOccurrences(of: "[mathjax]", with: "\\[").replacingOccurrences(of: "[/mathjax]", with: "\\]")
    }

    /// A problem whose text names variables of its `loncapa/python` script (`$x`, `$answer`) shows
    /// those names raw without the server, and often cannot be answered from them.
    private func usesScriptVariables(_ problem: XMLElement) -> Bool {
        var names = Set<String>()
        var text = ""
        func walk(_ element: XMLElement) {
            if element.name == "script" {
                let type = (element.attribute("type") ?? "").lowercased()
                if type.contains("python") {
                    names.formUnion(Self.assignedNames(in: element.children.map { if case .text(let t) = $0 { t } else { "" } }.joined()))
                }
                return
            }
            for attribute in element.attributes { text += " " + attribute.value }
            for child in element.children {
                switch child {
                case .text(let t): text += t
                case .element(let e): walk(e)
                }
            }
        }
        walk(problem)
        guard !names.isEmpty, text.contains("$") else { return false }
        let longest = names.map(\.count).max() ?? 0
        return Self.namesAfterDollar(in: text).contains { word in
            // CAPA replaces `$name` wherever it starts a longer word too.
            var prefix = Substring()
            for character in word.prefix(longest) {
                prefix.append(character)
                if names.contains(String(prefix)) { return true }
            }
            return false
        }
    }

    /// Each run of identifier characters right after a `$`, found in one pass: a scan of the
    /// text for each of 8,000 names once took 170 s on one problem.
    static func namesAfterDollar(in text: String) -> Set<Substring> {
        var words = Set<Substring>()
        var index = text.startIndex
        while let dollar = text[index...].firstIndex(of: "$") {
            let start = text.index(after: dollar)
            var end = start
            while end < text.endIndex, text[end].isLetter || text[end].isNumber || text[end] == "_" { end = text.index(after: end) }
            if end > start { words.insert(text[start..<end]) }
            index = end
        }
        return words
    }

    /// Names a Python script assigns at the start of a line (`x = …`, `a, b = …`).
    static func assignedNames(in script: String) -> Set<String> {
        var names = Set<String>()
        for line in script.split(whereSeparator: \.isNewline) {
            guard let equals = line.firstIndex(of: "="), !line[line.index(after: equals)...].hasPrefix("=") else { continue }
            for part in line[..<equals].split(separator: ",") {
                let name = part.trimmingCharacters(in: .whitespaces)
                if let first = name.first, first.isLetter || first == "_", name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                    names.insert(name)
                }
            }
        }
        return names
    }

    private func unsupportedReason(_ element: XMLElement) -> String? {
        if let reason = Self.unsupportedResponses[element.name] { return reason }
        for child in element.childElements {
            if let reason = unsupportedReason(child) { return reason }
        }
        return nil
    }

    private func renderNodes(_ nodes: [XMLNode], counter: inout Int) -> String {
        var out = ""
        for node in nodes {
            switch node {
            case .text(let text):
                out += HTMLText.escape(text)
            case .element(let element):
                if Self.answerElements.contains(element.name) { continue }
                if Self.responseTypes.contains(element.name) {
                    counter += 1
                    out += response(element, number: counter)
                } else if element.name == "problem" || element.name == "text" {
                    out += renderNodes(element.children, counter: &counter)
                } else {
                    // Walked, not copied: a response may sit inside any wrapper.
                    let attributes = HTMLText.attributes(element)
                    if HTMLText.voidElements.contains(element.name.lowercased()) {
                        out += "<\(element.name)\(attributes)>"
                    } else {
                        out += "<\(element.name)\(attributes)>" + renderNodes(element.children, counter: &counter) + "</\(element.name)>"
                    }
                }
            }
        }
        return out
    }

    private func response(_ element: XMLElement, number: Int) -> String {
        let id = "q\(number)"
        let label = first("label", in: element).map { visibleText($0) } ?? element.attribute("label") ?? "Question \(number)"
        let descriptions = all("description", in: element).map(visibleText)
        let describedBy = descriptions.indices.map { "\(id)-d\($0)" }.joined(separator: " ")
        var out = "<fieldset class=\"coursepack-response\" id=\"\(id)\"\(describedBy.isEmpty ? "" : " aria-describedby=\"\(describedBy)\"")>\n"
        // Inputs point at the legend rather than repeat it: a 100 KB label copied into each of
        // 2,000 inputs once made a 200 MB page.
        out += "<legend id=\"\(id)-label\">\(HTMLText.escape(label))</legend>\n"
        for (index, text) in descriptions.enumerated() {
            out += "<p class=\"coursepack-description\" id=\"\(id)-d\(index)\">\(HTMLText.escape(text))</p>\n"
        }
        // Inline content between the inputs (text, images) stays, minus what gives answers away.
        let context = element.children.filter {
            guard case .element(let child) = $0 else { return true }
            return !["label", "description", "choicegroup", "checkboxgroup", "optioninput", "textline", "formulaequationinput"].contains(child.name)
        }
        out += HTMLText.serialize(context) { Self.answerElements.contains($0.name) }
        // Field names and values are CAPA's own, so a saved answer replays to the LMS's
        // problem_check handler unchanged: `input_<problem id>_<response index + 2>_<input index + 1>`,
        // where the problem id of a block-v1 usage key is its url_name.
        let field = "input_\(block.urlName)_\(number + 1)"
        switch element.name {
        case "multiplechoiceresponse", "choiceresponse":
            let checkbox = element.name == "choiceresponse"
            var unnamed = 0
            for (index, choice) in all("choice", in: element).enumerated() {
                let value: String
                if checkbox {
                    value = choice.attribute("name").flatMap { $0.isEmpty ? nil : $0 } ?? "choice_\(index)"
                } else if let name = choice.attribute("name") {
                    value = "choice_" + name
                } else {
                    value = "choice_\(unnamed)"
                    unnamed += 1
                }
                let text = HTMLText.serialize(choice.children) { Self.answerElements.contains($0.name) }
                let name = checkbox ? field + "_1[]" : field + "_1"
                out += "<label class=\"coursepack-choice\"><input type=\"\(checkbox ? "checkbox" : "radio")\" name=\"\(name)\" value=\"\(HTMLText.escape(value))\"> \(text.trimmingWhitespace())</label>\n"
            }
        case "optionresponse":
            for (index, input) in all("optioninput", in: element).enumerated() {
                out += "<select name=\"\(field)_\(index + 1)\" aria-labelledby=\"\(id)-label\"><option value=\"\">Select an option</option>"
                for option in options(of: input) {
                    out += "<option value=\"\(HTMLText.escape(option))\">\(HTMLText.escape(option))</option>"
                }
                out += "</select>\n"
            }
        default:
            let numeric = element.name == "numericalresponse"
            let inputs = all(in: element, where: { ["textline", "formulaequationinput"].contains($0.name) })
            for index in (inputs.isEmpty ? [0] : Array(inputs.indices)) {
                out += "<input type=\"text\" name=\"\(field)_\(index + 1)\" aria-labelledby=\"\(id)-label\"\(numeric ? " inputmode=\"decimal\"" : "")>\n"
            }
        }
        return out + "</fieldset>\n"
    }

    /// Options of an `<optioninput>`: `<option>` children or the `options="('a','b')"` attribute.
    private func options(of input: XMLElement) -> [String] {
        let children = all("option", in: input).map { visibleText($0) }
        if !children.isEmpty { return children }
        guard let list = input.attribute("options") else { return [] }
        var result: [String] = []
        var current = ""
        var quote: Character?
        for character in list {
            if let open = quote {
                if character == open { result.append(current); current = ""; quote = nil } else { current.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
            }
        }
        return result
    }

    private func visibleText(_ element: XMLElement) -> String {
        element.children.map {
            switch $0 {
            case .text(let t): return t
            case .element(let e): return Self.answerElements.contains(e.name) ? "" : visibleText(e)
            }
        }.joined().trimmingWhitespace()
    }

    private func first(_ name: String, in element: XMLElement) -> XMLElement? { all(name, in: element).first }

    private func all(_ name: String, in element: XMLElement) -> [XMLElement] {
        all(in: element) { $0.name == name }
    }

    /// Elements matching `test` in document order, outside what gives answers away.
    private func all(in element: XMLElement, where test: (XMLElement) -> Bool) -> [XMLElement] {
        var found: [XMLElement] = []
        for child in element.childElements {
            if test(child) { found.append(child) } else if !Self.answerElements.contains(child.name) { found += all(in: child, where: test) }
        }
        return found
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
