import Foundation

/// The rows of the version being left that a mapping model's step reads besides the row it is
/// on (those a key path or a filter predicate reaches through relationships), gathered once by
/// the step's `prepare`.
final class SourceRows: Sendable {
    /// Each hierarchy's rows (by the name of its root entity), by key.
    let rows: [String: [Int64: MigrationRow]]
    /// The entity of each row, by hierarchy and key.
    let entities: [String: [Int64: String]]
    /// The rows whose foreign-key column holds a key: "Root/column" -> key -> the keys of the
    /// rows of the hierarchy `Root` that hold it.
    let referrers: [String: [Int64: [Int64]]]

    init(rows: [String: [Int64: MigrationRow]] = [:], entities: [String: [Int64: String]] = [:], foreignKeys: [String: Set<String>] = [:]) {
        self.rows = rows
        self.entities = entities
        var referrers: [String: [Int64: [Int64]]] = [:]
        for (root, columns) in foreignKeys {
            for (key, row) in rows[root] ?? [:] {
                for column in columns {
                    if case .int(let target) = row[column] { referrers["\(root)/\(column)", default: [:]][target, default: []].append(key) }
                }
            }
        }
        self.referrers = referrers.mapValues { $0.mapValues { $0.sorted() } }
    }
}

/// A mapping model's source filter predicate (Xcode's "Filter Predicate"), resolved against the
/// source entity of the version being left, as a fetch's predicate is, and evaluated by the
/// same in-memory evaluator on the old rows.
struct MappingFilter: Sendable {
    /// The entity mapping's name, and the predicate as the mapping model writes it.
    let mapping: String
    let text: String
    let predicate: ResolvedPredicate
    /// The source entity (of the version being left).
    let entity: EntityDescription
    let layout: RelationshipLayout
    let model: ObjectModel
    /// The hierarchies (by root entity name, with their entities) whose rows it reads through
    /// relationships, and the foreign-key columns of each that it reads from the other side.
    let hierarchies: [String: [String]]
    let foreignKeys: [String: Set<String>]

    /// Resolves `text` against `entity` of `model`; the reason it cannot be evaluated on old rows
    /// otherwise (a format Skerry does not read, a name the entity lacks, a relationship whose
    /// links a migration step cannot read from the rows, a raw SQL condition).
    static func compile(_ text: String, mapping: String, entity: EntityDescription, model: ObjectModel) -> Result<
        MappingFilter, Unevaluable
    > {
        // The predicate is on the source object: `$source.name` is `name`.
        let format = text.replacingOccurrences(of: "$source.", with: "")
        let predicate: ResolvedPredicate
        do throws(SkerryError) {
            predicate = try FetchPredicate(format: format).resolved(for: entity, in: model)
        } catch {
            return .failure(Unevaluable(reason: error.message))
        }
        let layout = RelationshipLayout(entities: model.entities)
        var hierarchies: [String: [String]] = [:], foreignKeys: [String: Set<String>] = [:]
        var problem: String?
        func visit(_ relationship: ResolvedRelationship) {
            let name = relationship.entity.relationships[relationship.index].name
            let root = relationship.destination.rootEntity
            hierarchies[root.name] = model.entityAndSubentities(of: root).map(\.name)
            switch layout.storage[relationship.entity.name]?[name] {
            case .foreignKey?: break
            case .inverseForeignKey(_, let column, _)?: foreignKeys[root.name, default: []].insert(column)
            default:
                problem =
                    problem
                    ?? "'\(relationship.entity.name).\(name)' keeps its links in a join table, which a step does not read row by row"
            }
        }
        func visit(_ key: ResolvedKey) { key.path.forEach(visit) }
        func walk(_ node: ResolvedPredicate) {
            switch node {
            case .constant: break
            case .comparison(let key, _, _), .isIn(let key, _), .between(let key, _, _), .string(let key, _, _, _): visit(key)
            case .and(let parts), .or(let parts): parts.forEach(walk)
            case .not(let inner): walk(inner)
            case .any(let relationship, let inner), .all(let relationship, let inner):
                visit(relationship)
                walk(inner)
            case .aggregate(let aggregate, _, _):
                aggregate.path.forEach(visit)
                visit(aggregate.collection)
                if let key = aggregate.key { visit(key) }
                if let filter = aggregate.filter { walk(filter) }
            case .isObject: problem = problem ?? "it names objects"
            case .sql: problem = problem ?? "it holds a raw SQL condition"
            }
        }
        walk(predicate)
        if let problem { return .failure(Unevaluable(reason: problem)) }
        return .success(
            MappingFilter(
                mapping: mapping, text: text, predicate: predicate, entity: entity, layout: layout, model: model,
                hierarchies: hierarchies, foreignKeys: foreignKeys))
    }

    /// Whether the old row `row` (of ``entity``) matches.
    func matches(_ row: MigrationRow, _ rows: SourceRows) throws -> Bool {
        try predicate.evaluate([MigrationRowSubject(row: row, entity: entity, filter: self, rows: rows)])[0]
    }
}

/// Why a filter predicate cannot be evaluated on old rows.
struct Unevaluable: Error {
    let reason: String
}

/// An old row as a predicate subject: attribute values by name, to-one relationships through
/// their foreign keys, to-many ones through the foreign keys of the rows that point back.
private struct MigrationRowSubject: PredicateSubject {
    let row: MigrationRow
    let entity: EntityDescription
    let filter: MappingFilter
    let rows: SourceRows

    /// IDs are only compared by `.isObject`, which ``MappingFilter/compile(_:mapping:entity:model:)`` refuses.
    var objectID: ObjectID { ObjectID(store: Self.identity, entity: entity, primaryKey: row.primaryKey) }
    private static let identity = StoreIdentity(identifier: "migration")

    func value(_ key: ResolvedKey) throws(SkerryError) -> AttributeValue {
        var current = self
        for hop in key.path {
            guard let next = try current.related(hop).first else { return .null }
            current = next
        }
        return current.row[key.attribute.name]
    }

    func related(_ relationship: ResolvedRelationship) throws(SkerryError) -> [MigrationRowSubject] {
        let name = relationship.entity.relationships[relationship.index].name
        let root = relationship.destination.rootEntity.name
        func subject(_ key: Int64) -> MigrationRowSubject? {
            guard let found = rows.rows[root]?[key], let entityName = rows.entities[root]?[key],
                let entity = filter.model.entity(named: entityName), entity.isKind(of: relationship.destination)
            else { return nil }
            return MigrationRowSubject(row: found, entity: entity, filter: filter, rows: rows)
        }
        switch filter.layout.storage[entity.name]?[name] {
        case .foreignKey(let column)?:
            guard case .int(let key) = row[column] else { return [] }
            return subject(key).map { [$0] } ?? []
        case .inverseForeignKey(_, let column, _)?:
            return (rows.referrers["\(root)/\(column)"]?[row.primaryKey] ?? []).compactMap(subject)
        default:
            return [] // refused when the filter was compiled
        }
    }

    static func evaluateSQL(
        _ condition: String, _ bindings: [AttributeValue], entity: EntityDescription, on subjects: [MigrationRowSubject]
    ) throws(SkerryError) -> [Bool] {
        // Refused when the filter was compiled; never taken for "no match".
        throw SkerryError(.invalidArgument, "A mapping model's filter predicate cannot hold a raw SQL condition.", entityName: entity.name)
    }
}
