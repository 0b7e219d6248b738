import Foundation
import SkerryCore

extension PostgresStore {
    /// The links of a migration step: read from where the old version keeps each relationship
    /// into temporary tables before anything changes, written to where the new version keeps
    /// it once the new columns and join tables exist, then counted there.
    ///
    /// A link is (source key, target key, source order, target order) as seen from a new
    /// relationship that owns its storage (a foreign key, or a join table's `source` side); the
    /// orders are the target's position in the source's list and the source's in the target's
    /// (for ordered relationships; numbered by key when the old version kept no order).
    struct MigrationLinks {
        /// One relationship's links, held in a temporary table.
        struct Carried {
            let table: String
            let relationship: String
            let storage: RelationshipStorage
            /// The order column of the inverse, in the source's table, for a foreign key.
            let inverseOrderColumn: String?
            let count: Int64
        }

        private(set) var carried: [Carried] = []

        /// Reads every link the new relationships can hold from the old storage.
        /// - Throws: ``SkerryError/Code/migrationWouldLoseData`` when a relationship made to-one
        ///   (on either side) would have to hold several objects.
        init(
            mapping: SchemaMapping, oldLayout: RelationshipLayout, newLayout: RelationshipLayout, number: Int,
            _ connection: PostgresConnection
        ) throws {
            let q = SQLBuilder.quote
            for entityMapping in mapping.entities {
                let entity = entityMapping.destination
                for (index, relationship) in entity.relationships.enumerated() {
                    guard let storage = newLayout.storage[entity.name]?[relationship.name] else { continue }
                    switch storage {
                    case .foreignKey: break
                    case .joinTable(_, let sourceColumn, _, _) where sourceColumn == "source": break
                    default: continue // carried from the side that owns the storage
                    }
                    guard
                        let select = Self.oldLinks(
                            of: relationship, at: index, in: entityMapping, mapping: mapping, oldLayout: oldLayout)
                    else { continue }
                    let table = "_skerry_links_\(carried.count)"
                    try connection.execute(
                        "CREATE TEMPORARY TABLE \(q(table)) (s bigint NOT NULL, t bigint NOT NULL, so bigint, \"to\" bigint) ON COMMIT DROP"
                    )
                    try connection.execute(
                        "INSERT INTO \(q(table)) (s, t, so, \"to\") SELECT DISTINCT ON (s, t) s, t, so, \"to\" FROM (\(select)) AS links")
                    let here = "'\(entity.name).\(relationship.name)'"
                    let inverse = relationship.inverseName.flatMap { name in
                        mapping.mapping(ofDestination: relationship.destinationEntityName)?.destination.relationships.first {
                            $0.name == name
                        }
                    }
                    if !relationship.isToMany,
                        try count(connection, "SELECT count(*) FROM (SELECT s FROM \(q(table)) GROUP BY s HAVING count(*) > 1) AS several")
                            > 0
                    {
                        throw SkerryError(
                            .migrationWouldLoseData,
                            "Step \(number): \(here) is to-one now, and some objects hold several related objects in it.",
                            entityName: entity.name, key: relationship.name)
                    }
                    if let inverse, !inverse.isToMany,
                        try count(connection, "SELECT count(*) FROM (SELECT t FROM \(q(table)) GROUP BY t HAVING count(*) > 1) AS several")
                            > 0
                    {
                        throw SkerryError(
                            .migrationWouldLoseData,
                            "Step \(number): '\(relationship.destinationEntityName).\(inverse.name)' is to-one now, and some objects hold several related objects in it.",
                            entityName: relationship.destinationEntityName, key: inverse.name)
                    }
                    var inverseOrderColumn: String?
                    if let inverse, let destination = mapping.mapping(ofDestination: relationship.destinationEntityName)?.destination,
                        case .inverseForeignKey(_, _, let order?)? = newLayout.storage[destination.name]?[inverse.name]
                    {
                        inverseOrderColumn = order
                    }
                    carried.append(
                        Carried(
                            table: table, relationship: "\(entity.name).\(relationship.name)", storage: storage,
                            inverseOrderColumn: inverseOrderColumn,
                            count: try count(connection, "SELECT count(*) FROM \(q(table))")))
                }
            }
        }

        /// The SELECT of (s, t, so, to) giving the old links of the new `relationship` (index
        /// `index` of `entityMapping.destination`): those of the old relationship it comes from,
        /// or of the old inverse its inverse comes from (turned around). Nil when neither existed,
        /// or when the related objects are of an entity that is no longer the destination (the
        /// relationship then starts empty, as with the SQLite store).
        private static func oldLinks(
            of relationship: RelationshipDescription, at index: Int, in entityMapping: SchemaMapping.EntityMapping,
            mapping: SchemaMapping, oldLayout: RelationshipLayout
        ) -> String? {
            let destinationMapping = mapping.mapping(ofDestination: relationship.destinationEntityName)
            if let old = entityMapping.relationships[index] {
                guard mapping.mapping(ofSource: old.destination)?.destination.name == relationship.destinationEntityName else {
                    return nil
                }
                return select(old, of: entityMapping.source.name, oldLayout, turned: false)
            }
            guard let inverseName = relationship.inverseName, let destinationMapping,
                let inverseIndex = destinationMapping.destination.relationships.firstIndex(where: { $0.name == inverseName }),
                let old = destinationMapping.relationships[inverseIndex],
                mapping.mapping(ofSource: old.destination)?.destination.name == entityMapping.destination.name
            else { return nil }
            return select(old, of: destinationMapping.source.name, oldLayout, turned: true)
        }

        /// The links of old relationship `old` of old entity `entity`, as (s, t, so, to); swapped
        /// when `turned`. Only links whose two rows exist.
        private static func select(
            _ old: StoredSchema.Relationship, of entity: String, _ layout: RelationshipLayout, turned: Bool
        ) -> String? {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            let columns: (s: String, t: String, so: String, to: String), from: String
            switch layout.storage[entity]?[old.name] {
            case .foreignKey(let column)?:
                var inverseOrder = "NULL::bigint"
                if let inverse = old.inverse, case .inverseForeignKey(_, _, let order?)? = layout.storage[old.destination]?[inverse] {
                    inverseOrder = "r.\(q(order))"
                }
                columns = ("r.\(pk)", "r.\(q(column))", "NULL::bigint", inverseOrder)
                from = "\(q(entity)) AS r WHERE r.\(q(column)) IS NOT NULL"
            case .inverseForeignKey(let table, let column, let order)?:
                columns = ("r.\(q(column))", "r.\(pk)", order.map { "r.\(q($0))" } ?? "NULL::bigint", "NULL::bigint")
                from = "\(q(table)) AS r WHERE r.\(q(column)) IS NOT NULL"
            case .joinTable(let table, let sourceColumn, let targetColumn, _)?:
                columns = (
                    "r.\(q(sourceColumn))", "r.\(q(targetColumn))", "r.\(q(sourceColumn + "_order"))", "r.\(q(targetColumn + "_order"))"
                )
                from = "\(q(table)) AS r WHERE TRUE"
            case .transient?, nil:
                return nil
            }
            let (s, t, so, to) = turned ? (columns.t, columns.s, columns.to, columns.so) : columns
            return
                "SELECT \(s) AS s, \(t) AS t, \(so) AS so, \(to) AS \"to\" FROM \(from)"
                + " AND EXISTS (SELECT 1 FROM \(q(entity)) AS e WHERE e.\(pk) = \(turned ? t : s))"
                + " AND EXISTS (SELECT 1 FROM \(q(old.destination)) AS d WHERE d.\(pk) = \(turned ? s : t))"
        }

        /// Writes the links where the new version keeps them.
        func write(_ connection: PostgresConnection) throws {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            for links in carried {
                let numbered =
                    "SELECT s, t, coalesce(so, row_number() OVER (PARTITION BY s ORDER BY t)) AS so, coalesce(\"to\", row_number() OVER (PARTITION BY t ORDER BY s)) AS \"to\" FROM \(q(links.table))"
                switch links.storage {
                case .foreignKey(let column):
                    let entity = String(links.relationship.split(separator: ".")[0])
                    let order = links.inverseOrderColumn.map { ", \(q($0)) = l.\"to\"" } ?? ""
                    try connection.execute(
                        "UPDATE \(q(entity)) SET \(q(column)) = l.t\(order) FROM (\(numbered)) AS l WHERE \(q(entity)).\(pk) = l.s")
                case .joinTable(let table, _, _, _):
                    try connection.execute(
                        "INSERT INTO \(q(table)) (\"source\", \"target\", \"source_order\", \"target_order\") SELECT s, t, so, \"to\" FROM (\(numbered)) AS l ON CONFLICT DO NOTHING"
                    )
                default:
                    continue
                }
            }
        }

        /// Checks that every link carried is where the new version keeps it.
        func verify(_ connection: PostgresConnection) throws {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            for links in carried {
                let found: Int64
                switch links.storage {
                case .foreignKey(let column):
                    let entity = String(links.relationship.split(separator: ".")[0])
                    found = try count(
                        connection,
                        "SELECT count(*) FROM \(q(links.table)) AS l JOIN \(q(entity)) AS e ON e.\(pk) = l.s AND e.\(q(column)) = l.t")
                case .joinTable(let table, _, _, _):
                    found = try count(
                        connection,
                        "SELECT count(*) FROM \(q(links.table)) AS l JOIN \(q(table)) AS j ON j.\"source\" = l.s AND j.\"target\" = l.t")
                default:
                    continue
                }
                if found != links.count {
                    throw SkerryError(
                        .migrationWouldLoseData,
                        "The migration carried \(found) of the \(links.count) links of '\(links.relationship)'.",
                        key: String(links.relationship.split(separator: ".").last ?? ""))
                }
            }
        }
    }
}
