/// Where a relationship lives in the store. Each relationship pair is stored once:
///
/// - a to-one relationship whose inverse is to-many (or absent) is a foreign-key column of its
///   own entity's table, named after it; of a one-to-one pair, the side whose "Entity.name" sorts
///   first holds the column and the other side reads it;
/// - a to-many relationship whose inverse is to-one reads the inverse's column in the destination
///   table; if it is ordered, a column `_<Entity>_<name>_order` of the destination table keeps
///   the order;
/// - a to-many relationship whose inverse is to-many (or absent) is a join table
///   `_<Entity>_<name>` of the side that sorts first, with `source`, `target`, `source_order` and
///   `target_order` columns.
enum RelationshipStorage: Sendable, Hashable {
    /// A column of the source entity's table that holds the destination's key.
    case foreignKey(column: String)
    /// The destination table's foreign-key column that points back at the source; `orderColumn`
    /// (in the destination table) keeps the order of an ordered to-many relationship.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// A join table; this side's keys are in `sourceColumn`, the related keys in `targetColumn`.
    case joinTable(table: String, sourceColumn: String, targetColumn: String, orderColumn: String?)

    /// Whether saving the relationship's changes writes something for this side (the side that
    /// holds the foreign key, the ordered side of an inverse key, the owner of a join table).
    var isWrittenBySource: Bool {
        switch self {
        case .foreignKey: return true
        case .inverseForeignKey(_, _, let orderColumn): return orderColumn != nil
        case .joinTable(_, let sourceColumn, _, _): return sourceColumn == "source"
        }
    }
}

/// The relationships of a set of entities, with their storage: computed from the model, and from
/// the schema a store recorded (to compare the two when migrating).
struct RelationshipLayout: Sendable {
    /// A relationship as the layout needs it.
    struct Relationship: Sendable, Hashable {
        let entity: String
        let name: String
        let destination: String
        let inverse: String?
        let isToMany: Bool
        let isOrdered: Bool
    }

    /// Storage by entity name, then relationship name.
    let storage: [String: [String: RelationshipStorage]]

    init(_ relationships: [Relationship]) {
        let byKey = Dictionary(relationships.map { ("\($0.entity).\($0.name)", $0) }, uniquingKeysWith: { first, _ in first })
        var storage: [String: [String: RelationshipStorage]] = [:]
        for r in relationships {
            let inverse = r.inverse.flatMap { byKey["\(r.destination).\($0)"] }
            let ownsPair = inverse.map { "\(r.entity).\(r.name)" <= "\($0.entity).\($0.name)" } ?? true
            let value: RelationshipStorage
            switch (r.isToMany, inverse?.isToMany) {
            case (false, false?):
                value = ownsPair ? .foreignKey(column: r.name)
                    : .inverseForeignKey(table: r.destination, column: inverse!.name, orderColumn: nil)
            case (false, _):
                value = .foreignKey(column: r.name)
            case (true, false?):
                value = .inverseForeignKey(table: r.destination, column: inverse!.name,
                                           orderColumn: r.isOrdered ? "_\(r.entity)_\(r.name)_order" : nil)
            case (true, _):
                let owner = ownsPair ? r : inverse!
                let mine = ownsPair
                value = .joinTable(table: "_\(owner.entity)_\(owner.name)",
                                   sourceColumn: mine ? "source" : "target", targetColumn: mine ? "target" : "source",
                                   orderColumn: r.isOrdered ? (mine ? "source_order" : "target_order") : nil)
            }
            storage[r.entity, default: [:]][r.name] = value
        }
        self.storage = storage
    }

    init(entities: [EntityDescription]) {
        self.init(entities.flatMap { entity in
            entity.relationships.map {
                Relationship(entity: entity.name, name: $0.name, destination: $0.destinationEntityName,
                             inverse: $0.inverseName, isToMany: $0.isToMany, isOrdered: $0.isOrdered)
            }
        })
    }

    init(schema: StoredSchema) {
        self.init(schema.entities.flatMap { entity in
            entity.relationships.map {
                Relationship(entity: entity.name, name: $0.name, destination: $0.destination,
                             inverse: $0.inverse, isToMany: $0.isToMany, isOrdered: $0.isOrdered)
            }
        })
    }

    /// The foreign-key and order columns each table gets, by table name.
    var extraColumns: [String: Set<String>] {
        var columns: [String: Set<String>] = [:]
        for (entity, relationships) in storage {
            for value in relationships.values {
                switch value {
                case .foreignKey(let column): columns[entity, default: []].insert(column)
                case .inverseForeignKey(let table, _, let orderColumn?): columns[table, default: []].insert(orderColumn)
                default: break
                }
            }
        }
        return columns
    }

    /// The join tables.
    var joinTables: Set<String> {
        Set(storage.values.flatMap(\.values).compactMap {
            if case .joinTable(let table, _, _, _) = $0 { return table }
            return nil
        })
    }
}
