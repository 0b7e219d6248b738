import Foundation
import SkerryCore

extension PostgresStore {
    /// The links of a migration step: read from where the old version keeps each relationship
    /// into temporary tables before anything changes, written to where the new version keeps
    /// it once the new columns and join tables exist, then counted there.
    ///
    /// A relationship is carried once for its whole hierarchy, from the side that owns its
    /// storage (a foreign key, or a join table's `source` side), as declared by the topmost
    /// entity that has it: its links are those of the rows of that entity and of every
    /// sub-entity (each in its own table), to objects of any entity of the destination's
    /// hierarchy that the new relationship can hold. A link is (source key, target key, source
    /// order, target order); the orders are the target's position in the source's list and the
    /// source's in the target's (for ordered relationships; numbered by key when the old version
    /// kept no order). Keys are unique in a hierarchy (rows whose keys would clash in a merged
    /// hierarchy were renumbered before the links are read), so a key names one row. Each list is
    /// numbered again from 0 when written: its old order first, then by key (as the SQLite store).
    struct MigrationLinks {
        /// One relationship's links, held in a temporary table.
        struct Carried {
            let table: String
            /// "DeclaringEntity.name".
            let relationship: String
            let storage: RelationshipStorage
            /// The tables that hold the relationship's foreign-key column: the declaring entity's
            /// and its sub-entities'.
            let members: [String]
            /// The order column of the inverse, in the members' tables, for a foreign key.
            let inverseOrderColumn: String?
            let count: Int64
        }

        private(set) var carried: [Carried] = []

        /// Reads every link the new relationships can hold from the old storage.
        /// - Throws: ``SkerryError/Code/migrationWouldLoseData`` when a relationship made to-one
        ///   (on either side) would have to hold several objects.
        init(
            mapping: SchemaMapping, destination entities: [EntityDescription], oldLayout: RelationshipLayout,
            newLayout: RelationshipLayout, number: Int, _ connection: PostgresConnection
        ) throws {
            let q = SQLBuilder.quote
            let reading = LinkSources(mapping: mapping, entities: entities, oldLayout: oldLayout)
            for declaring in entities {
                for relationship in declaring.relationships
                where RelationshipLayout.declaringEntity(ofRelationship: relationship.name, in: declaring) === declaring {
                    guard let storage = newLayout.storage[declaring.name]?[relationship.name] else { continue }
                    switch storage {
                    case .foreignKey: break
                    case .joinTable(_, let sourceColumn, _, _) where sourceColumn == "source": break
                    default: continue // carried from the side that owns the storage
                    }
                    let members = entities.filter { $0.isKind(of: declaring) }
                    let selects = reading.selects(relationship, members: members)
                    guard !selects.isEmpty else { continue }
                    let table = "_skerry_links_\(carried.count)"
                    try connection.execute(
                        "CREATE TEMPORARY TABLE \(q(table)) (s bigint NOT NULL, t bigint NOT NULL, so bigint, \"to\" bigint) ON COMMIT DROP"
                    )
                    try connection.execute(
                        "INSERT INTO \(q(table)) (s, t, so, \"to\") SELECT DISTINCT ON (s, t) s, t, so, \"to\" FROM ("
                            + selects.joined(separator: " UNION ALL ") + ") AS links")
                    let destination = entities.first { $0.name == relationship.destinationEntityName }
                    // A transient inverse is not stored: the relationship is kept as if it had none.
                    let inverse = relationship.inverseName.flatMap { destination?.relationship(named: $0) }.flatMap {
                        $0.isTransient ? nil : $0
                    }
                    // A side that is to-one now holds one link per object: `column` ("s" for the
                    // sources, "t" for the destinations) repeats no value.
                    func refuseSeveral(_ column: String, _ entityName: String, _ key: String) throws {
                        let several = try connection.query(
                            "SELECT count(*), max(n), (SELECT count(*) FROM \(q(table))) FROM (SELECT count(*) AS n FROM \(q(table)) GROUP BY \(column) HAVING count(*) > 1) AS several"
                        )
                        guard several.int64(0, 0) > 0 else { return }
                        throw SkerryError(
                            .migrationWouldLoseData,
                            "Step \(number): '\(entityName).\(key)' is to-one in the new model, but \(several.int64(0, 0)) object(s) of '\(entityName)' hold several objects in it (up to \(several.int64(0, 1)), \(several.int64(0, 2)) links in all); a to-one relationship can keep only one of them.",
                            entityName: entityName, key: key)
                    }
                    if !relationship.isToMany { try refuseSeveral("s", declaring.name, relationship.name) }
                    if let inverse, !inverse.isToMany { try refuseSeveral("t", relationship.destinationEntityName, inverse.name) }
                    var inverseOrderColumn: String?
                    if let inverse,
                        case .inverseForeignKey(_, _, let order?)? = newLayout.storage[relationship.destinationEntityName]?[inverse.name]
                    {
                        inverseOrderColumn = order
                    }
                    carried.append(
                        Carried(
                            table: table, relationship: "\(declaring.name).\(relationship.name)", storage: storage,
                            members: members.map(\.name), inverseOrderColumn: inverseOrderColumn,
                            count: try count(connection, "SELECT count(*) FROM \(q(table))")))
                }
            }
        }

        /// Writes the links where the new version keeps them.
        func write(_ connection: PostgresConnection) throws {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            for links in carried {
                // Positions from 0 in each list: the old order first, then (where the old version
                // kept none, or for links that join a list from elsewhere) by key.
                let numbered =
                    "SELECT s, t, row_number() OVER (PARTITION BY s ORDER BY so NULLS LAST, t) - 1 AS so, row_number() OVER (PARTITION BY t ORDER BY \"to\" NULLS LAST, s) - 1 AS \"to\" FROM \(q(links.table))"
                switch links.storage {
                case .foreignKey(let column):
                    let order = links.inverseOrderColumn.map { ", \(q($0)) = l.\"to\"" } ?? ""
                    for member in links.members {
                        try connection.execute(
                            "UPDATE \(q(member)) SET \(q(column)) = l.t\(order) FROM (\(numbered)) AS l WHERE \(q(member)).\(pk) = l.s")
                    }
                case .joinTable(let table, _, _, _):
                    try connection.execute(
                        "INSERT INTO \(q(table)) (\"source\", \"target\", \"source_order\", \"target_order\") SELECT s, t, so, \"to\" FROM (\(numbered)) AS l ON CONFLICT DO NOTHING"
                    )
                default:
                    continue
                }
            }
        }

        /// Drops the temporary tables: the next step of the same load (the same transaction)
        /// makes its own under the same names.
        func drop(_ connection: PostgresConnection) throws {
            for links in carried { try connection.execute("DROP TABLE \(SQLBuilder.quote(links.table))") }
        }

        /// Checks that every link carried is where the new version keeps it.
        func verify(_ connection: PostgresConnection) throws {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            for links in carried {
                let found: Int64
                switch links.storage {
                case .foreignKey(let column):
                    let held = links.members.map { "EXISTS (SELECT 1 FROM \(q($0)) AS e WHERE e.\(pk) = l.s AND e.\(q(column)) = l.t)" }
                    found = try count(
                        connection, "SELECT count(*) FROM \(q(links.table)) AS l WHERE \(held.joined(separator: " OR "))")
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
                        entityName: String(links.relationship.split(separator: ".")[0]),
                        key: String(links.relationship.split(separator: ".").last ?? ""))
                }
            }
        }
    }

    /// Where the old version keeps the links a new relationship takes over: the SELECTs of
    /// (s, t, so, to) over the old tables, before anything changed.
    struct LinkSources {
        let mapping: SchemaMapping
        let entities: [EntityDescription]
        let oldLayout: RelationshipLayout

        /// The SELECTs giving the old links of the new `relationship`, held by `members` (the
        /// entity that declares it and its sub-entities): those of the old relationship each
        /// member's rows had, and those of the old relationship the inverse's rows had (turned
        /// around), between rows that both exist and that the new relationship can hold (a
        /// related object of an entity that is no longer the destination or one of its
        /// sub-entities is left out, as with the SQLite store).
        func selects(_ relationship: RelationshipDescription, members: [EntityDescription]) -> [String] {
            let destinations = entities.filter { $0.isKind(ofEntityNamed: relationship.destinationEntityName) }
            var selects: [String] = []
            for member in members {
                guard let memberMapping = mapping.mapping(ofDestination: member.name) else { continue }
                if let index = member.relationships.firstIndex(where: { $0.name == relationship.name }),
                    let old = memberMapping.relationships[index]
                {
                    let related = oldLayout.entityAndSubentities(old.destination).filter { name in
                        mapping.mapping(ofSource: name).map { destination in destinations.contains { $0 === destination.destination } }
                            ?? false
                    }
                    selects += select(old, of: memberMapping.source.name, relatedIn: related, turned: false)
                }
                guard let inverseName = relationship.inverseName else { continue }
                for destination in destinations {
                    guard let destinationMapping = mapping.mapping(ofDestination: destination.name),
                        let index = destination.relationships.firstIndex(where: { $0.name == inverseName }),
                        let old = destinationMapping.relationships[index],
                        oldLayout.entityAndSubentities(old.destination).contains(memberMapping.source.name)
                    else { continue }
                    selects += select(old, of: destinationMapping.source.name, relatedIn: [memberMapping.source.name], turned: true)
                }
            }
            return selects
        }

        /// The links of old relationship `old` held by the rows of old entity `holder`, to rows of
        /// the old tables `related`, as (s, t, so, to); swapped when `turned`.
        private func select(
            _ old: StoredSchema.Relationship, of holder: String, relatedIn related: [String], turned: Bool
        ) -> [String] {
            guard !related.isEmpty else { return [] }
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            func isRelated(_ key: String) -> String {
                "(" + related.map { "EXISTS (SELECT 1 FROM \(q($0)) AS d WHERE d.\(pk) = \(key))" }.joined(separator: " OR ") + ")"
            }
            let isHeld = { (key: String) in "EXISTS (SELECT 1 FROM \(q(holder)) AS e WHERE e.\(pk) = \(key))" }
            // (holder's key, related key, the related object's position in the holder's list,
            // the holder's in the related object's), and what the rows come from.
            var parts: [(columns: (String, String, String, String), from: String)] = []
            switch oldLayout.storage[holder]?[old.name] {
            case .foreignKey(let column)?:
                var inverseOrder = "NULL::bigint"
                if let inverse = old.inverse, case .inverseForeignKey(_, _, let order?)? = oldLayout.storage[old.destination]?[inverse] {
                    inverseOrder = "r.\(q(order))"
                }
                parts.append(
                    (
                        ("r.\(pk)", "r.\(q(column))", "NULL::bigint", inverseOrder),
                        "\(q(holder)) AS r WHERE r.\(q(column)) IS NOT NULL AND \(isRelated("r.\(q(column))"))"
                    ))
            case .inverseForeignKey(_, let column, let order)?:
                // The column is in the table of every entity of the destination's hierarchy.
                for table in related {
                    parts.append(
                        (
                            ("r.\(q(column))", "r.\(pk)", order.map { "r.\(q($0))" } ?? "NULL::bigint", "NULL::bigint"),
                            "\(q(table)) AS r WHERE r.\(q(column)) IS NOT NULL AND \(isHeld("r.\(q(column))"))"
                        ))
                }
            case .joinTable(let table, let sourceColumn, let targetColumn, _)?:
                parts.append(
                    (
                        (
                            "r.\(q(sourceColumn))", "r.\(q(targetColumn))", "r.\(q(sourceColumn + "_order"))",
                            "r.\(q(targetColumn + "_order"))"
                        ),
                        "\(q(table)) AS r WHERE \(isHeld("r.\(q(sourceColumn))")) AND \(isRelated("r.\(q(targetColumn))"))"
                    ))
            case .transient?, nil:
                return []
            }
            return parts.map { part in
                let (h, r, ho, ro) = part.columns
                let (s, t, so, to) = turned ? (r, h, ro, ho) : (h, r, ho, ro)
                return "SELECT \(s) AS s, \(t) AS t, \(so) AS so, \(to) AS \"to\" FROM \(part.from)"
            }
        }
    }
}
