import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Counts the parts of an Xcode model version's `contents` file that Skerry reads past: they
/// describe behaviour of Core Data on Apple platforms, not what a store holds.
final class IgnoredModelElements: NSObject, XMLParserDelegate {
    private var counts: [String: Int] = [:]

    /// What a version's file holds that Skerry ignores, as phrases ("2 fetch request templates");
    /// empty when nothing (or when the file cannot be read: loading it reports that).
    static func count(inVersionAt url: URL) -> [String] {
        guard let parser = XMLParser(contentsOf: url.appendingPathComponent("contents")) else { return [] }
        let delegate = IgnoredModelElements()
        parser.delegate = delegate
        guard parser.parse() else { return [] }
        return phrases.compactMap { key, singular, plural in
            guard let count = delegate.counts[key], count > 0 else { return nil }
            return "\(count) \(count == 1 ? singular : plural)"
        }
    }

    private static let phrases: [(String, String, String)] = [
        ("userInfo", "user info dictionary", "user info dictionaries"),
        ("validation", "validation rule", "validation rules"),
        ("externalStorage", "external binary storage flag", "external binary storage flags"),
        ("className", "custom class name", "custom class names"),
        ("elements", "diagram layout", "diagram layouts"),
    ]

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        switch elementName {
        case "userInfo", "elements":
            counts[elementName, default: 0] += 1
        case "attribute":
            let rules = ["minValueString", "maxValueString", "regularExpressionString"].filter { attributes[$0] != nil }.count
            counts["validation", default: 0] += rules
            if attributes["allowsExternalBinaryDataStorage"] == "YES" { counts["externalStorage", default: 0] += 1 }
        case "entity":
            if let name = attributes["representedClassName"], name != attributes["name"] { counts["className", default: 0] += 1 }
        default:
            break
        }
    }
}
