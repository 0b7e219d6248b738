import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// One element of a parsed XML document: the little the model loader needs (no text content,
/// no namespaces).
struct XMLNode: Sendable {
    /// The element's name.
    let name: String
    /// The element's attributes.
    let attributes: [String: String]
    /// The child elements, in document order.
    var children: [XMLNode]
    /// The element's text content (the characters directly inside it), for the few elements
    /// that carry one (a mapping model's attribute values).
    var text: String = ""
    /// The line the element starts on (1-based), for error messages.
    let line: Int

    /// The deepest nesting of elements the reader accepts (Xcode's model and mapping files nest
    /// fewer than ten).
    static let maximumDepth = 64

    /// The value of the attribute `key`, or nil.
    subscript(_ key: String) -> String? { attributes[key] }

    /// The child elements named `name`, in document order.
    func children(named name: String) -> [XMLNode] {
        children.filter { $0.name == name }
    }

    /// Whether the attribute `key` is "YES" (Xcode's way of writing true).
    func flag(_ key: String) -> Bool {
        attributes[key] == "YES"
    }

    /// Parses `data` into its root element.
    /// - Returns: the root element, or the parser's complaint and the line it was on.
    static func parse(_ data: Data) -> Result<XMLNode, XMLParseFailure> {
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        let builder = XMLTreeBuilder()
        parser.delegate = builder
        let ok = parser.parse()
        // The first error the delegate saw wins: swift-corelibs-foundation's parser may go on
        // after an error (and even return true), reporting later, less telling errors.
        if let failure = builder.failure {
            return .failure(failure)
        }
        if ok, parser.parserError == nil, builder.stack.isEmpty, let root = builder.root {
            return .success(root)
        }
        let reason =
            parser.parserError.map { "XML parser error \(($0 as NSError).code)" }
            ?? (builder.root == nil ? "the document has no root element" : "unexpected end of the document")
        return .failure(
            XMLParseFailure(
                reason: reason, line: max(parser.lineNumber, 1),
                openElements: builder.openElements))
    }
}

/// Why a document could not be parsed.
struct XMLParseFailure: Error, Sendable {
    /// The parser's description of the problem.
    let reason: String
    /// The line the parser had reached.
    let line: Int
    /// The elements open at that point below the root, outermost first, each as its element
    /// name and its `name` attribute ("entity 'Book'").
    let openElements: [String]
}

/// Builds the element tree from the parser's events.
private final class XMLTreeBuilder: NSObject, XMLParserDelegate {
    /// The open elements, innermost last.
    var stack: [XMLNode] = []
    /// The document's root element, once closed.
    var root: XMLNode?
    /// The first parse error, where it happened.
    var failure: XMLParseFailure?

    /// The open elements below the root, outermost first, as "entity 'Book'".
    var openElements: [String] {
        stack.dropFirst().map { node in node["name"].map { "\(node.name) '\($0)'" } ?? node.name }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        failure = XMLParseFailure(
            reason: "XML parser error \((parseError as NSError).code)",
            line: max(parser.lineNumber, 1), openElements: openElements)
        parser.abortParsing()
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
        guard failure == nil else { return }
        guard stack.count < XMLNode.maximumDepth else {
            // A model file nests a handful of elements; a hostile one could nest enough to
            // overflow the stack when the tree is freed (or in the parser): stop here instead.
            failure = XMLParseFailure(
                reason: "elements are nested more than \(XMLNode.maximumDepth) deep",
                line: max(parser.lineNumber, 1), openElements: Array(openElements.prefix(8)))
            parser.abortParsing()
            return
        }
        stack.append(XMLNode(name: elementName, attributes: attributeDict, children: [], line: parser.lineNumber))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard failure == nil, !stack.isEmpty else { return }
        stack[stack.count - 1].text += string
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?
    ) {
        guard failure == nil, let node = stack.popLast() else { return }
        if stack.isEmpty {
            root = node
        } else {
            stack[stack.count - 1].children.append(node)
        }
    }
}
