import Foundation
import Synchronization

/// A step hop through a to-one relationship: the relationship, and the hierarchy (by root
/// entity) whose rows hold the objects it reaches.
struct Hop: Sendable {
    let relationship: String
    let hierarchy: String
}

/// What a destination property gets: a value computed from the source row.
struct Assignment: Sendable {
    let name: String
    /// The attribute's type to convert to (nil: a relationship's key, or no model to check).
    let type: AttributeType?
    let value: Evaluable
    /// For a relationship's key: the old entity whose row it names (its key in the new store is
    /// looked up).
    var reached: String? = nil
}

/// An expression a step computes for each row.
indirect enum Evaluable: Sendable {
    case constant(AttributeValue)
    /// A property of the source row, or of the row reached through to-one relationships.
    case keyPath(hops: [Hop], last: String)
    case function(Evaluable, String, [Evaluable])
    case predefined(String, [Evaluable])

    func evaluate(_ source: MigrationRow, _ lookup: SourceRows) -> AttributeValue {
        switch self {
        case .constant(let value):
            return value
        case .keyPath(let hops, let last):
            var row = source
            for hop in hops {
                guard case .int(let key) = row[hop.relationship], let next = lookup.rows[hop.hierarchy]?[key] else { return .null }
                row = next
            }
            return row[last]
        case .function(let receiver, let selector, let arguments):
            return MappingValue.apply(selector, to: receiver.evaluate(source, lookup), arguments.map { $0.evaluate(source, lookup) })
        case .predefined(let name, let arguments):
            return MappingValue.predefined(name, arguments.map { $0.evaluate(source, lookup) })
        }
    }
}

/// The rows a step's `prepare` read, for its `keepsRow`, `transformRow` and `finish`.
final class RowLookup: Sendable {
    let storage = Mutex<SourceRows>(SourceRows())
}
