import Foundation

/// How a derived attribute's value is computed when its object is saved: the derivations Core
/// Data documents for derived attributes in SQLite stores.
public enum AttributeDerivation: Sendable, Hashable, CustomStringConvertible {
    /// The value at a key path: an attribute, or an attribute through to-one relationships
    /// (`author.name`); nil where a relationship on the way is empty.
    case keyPath(String)
    /// The number of objects in a to-many relationship (`chapters.@count`).
    case count(relationship: String)
    /// An aggregate of an attribute over a to-many relationship (`items.@sum.price`): `sum`,
    /// `min`, `max` or `avg`.
    case aggregate(function: String, relationship: String, attribute: String)
    /// A text function of a key path's value: `canonical:` (case and diacritics folded, for
    /// searching), `lowercase:` or `uppercase:`.
    case function(name: String, keyPath: String)
    /// The time of the save (`now()`).
    case now

    public var description: String {
        switch self {
        case .keyPath(let path): return path
        case .count(let relationship): return "\(relationship).@count"
        case .aggregate(let function, let relationship, let attribute): return "\(relationship).@\(function).\(attribute)"
        case .function(let name, let keyPath): return "\(name):(\(keyPath))"
        case .now: return "now()"
        }
    }

    /// The text function `name` (`lowercase`, `uppercase`, or `canonical`: case, diacritics and
    /// width folded) of `text`, as a save computes it.
    static func apply(_ name: String, to text: String) -> String {
        switch name {
        case "lowercase": return text.lowercased()
        case "uppercase": return text.uppercased()
        default: return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        }
    }

    /// Parses a derivation expression as Xcode writes it (`derivationExpression`), or nil for one
    /// Skerry does not compute.
    public init?(expression: String) {
        let text = expression.trimmingCharacters(in: .whitespaces)
        let name = /[A-Za-z_][A-Za-z0-9_]*/
        if text.wholeMatch(of: /now\(\s*\)/) != nil {
            self = .now
        } else if let match = text.wholeMatch(of: /(canonical|lowercase|uppercase):\(\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\)/) {
            self = .function(name: String(match.output.1), keyPath: String(match.output.2))
        } else if let match = text.wholeMatch(of: /([A-Za-z_][A-Za-z0-9_]*)\.@count/) {
            self = .count(relationship: String(match.output.1))
        } else if let match = text.wholeMatch(of: /([A-Za-z_][A-Za-z0-9_]*)\.@(sum|min|max|avg)\.([A-Za-z_][A-Za-z0-9_]*)/) {
            self = .aggregate(function: String(match.output.2), relationship: String(match.output.1), attribute: String(match.output.3))
        } else if text.wholeMatch(of: name) != nil || text.wholeMatch(of: /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+/) != nil {
            self = .keyPath(text)
        } else {
            return nil
        }
    }
}
