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
package enum RelationshipStorage: Sendable, Hashable {
    /// A column of the source entity's table that holds the destination's key.
    case foreignKey(column: String)
    /// The destination table's foreign-key column that points back at the source; `orderColumn`
    /// (in the destination table) keeps the order of an ordered to-many relationship.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// A join table; this side's keys are in `sourceColumn`, the related keys in `targetColumn`.
    case joinTable(table: String, sourceColumn: String, targetColumn: String, orderColumn: String?)
    /// Not stored: a transient relationship (of a pair where either side is transient), which
    /// lives in memory only and reads as empty from the store.
    case transient

    /// Whether saving the relationship's changes writes something for this side (the side that
    /// holds the foreign key, the ordered side of an inverse key, the owner of a join table).
    package var isWrittenBySource: Bool {
        switch self {
        case .foreignKey: return true
        case .inverseForeignKey(_, _, let orderColumn): return orderColumn != nil
        case .joinTable(_, let sourceColumn, _, _): return sourceColumn == "source"
        case .transient: return false
        }
    }
}

/// The relationships of a set of entities, with their storage: computed from the model, and from
/// the schema a store recorded (to compare the two when migrating).
package struct RelationshipLayout: Sendable {
    /// A relationship as the layout needs it.
    struct Relationship: Sendable, Hashable {
        let entity: String
        let name: String
        let destination: String
        let inverse: String?
        let isToMany: Bool
        let isOrdered: Bool
        var isTransient = false
    }

    /// Storage by entity name, then relationship name.
    package let storage: [String: [String: RelationshipStorage]]

    init(_ relationships: [Relationship]) {
        let byKey = Dictionary(relationships.map { ("\($0.entity).\($0.name)", $0) }, uniquingKeysWith: { first, _ in first })
        var storage: [String: [String: RelationshipStorage]] = [:]
        for r in relationships {
            let inverse = r.inverse.flatMap { byKey["\(r.destination).\($0)"] }
            let ownsPair = inverse.map { "\(r.entity).\(r.name)" <= "\($0.entity).\($0.name)" } ?? true
            let value: RelationshipStorage
            switch (r.isToMany, inverse?.isToMany) {
            case _ where r.isTransient || inverse?.isTransient == true:
                value = .transient
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

    package init(entities: [EntityDescription]) {
        self.init(entities.flatMap { entity in
            entity.relationships.map {
                Relationship(entity: entity.name, name: $0.name, destination: $0.destinationEntityName,
                             inverse: $0.inverseName, isToMany: $0.isToMany, isOrdered: $0.isOrdered, isTransient: $0.isTransient)
            }
        })
    }

    package init(schema: StoredSchema) {
        self.init(schema.entities.flatMap { entity in
            entity.relationships.map {
                Relationship(entity: entity.name, name: $0.name, destination: $0.destination,
                             inverse: $0.inverse, isToMany: $0.isToMany, isOrdered: $0.isOrdered)
            }
        })
    }

    /// The foreign-key and order columns each table gets, by table name.
    package var extraColumns: [String: Set<String>] {
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
    package var joinTables: Set<String> {
        Set(storage.values.flatMap(\.values).compactMap {
            if case .joinTable(let table, _, _, _) = $0 { return table }
            return nil
        })
    }
}

/// How the SQLite store keeps one entity's rows: the storage of each relationship, the
/// foreign-key columns that follow the attributes in its rows, and the SQL that reads and
/// inserts them. Computed once per entity when the store loads.
package struct SQLiteEntityLayout: Sendable {
    /// Each relationship's storage, by relationship index.
    package let storage: [RelationshipStorage]
    /// The indexes of the relationships kept in a foreign-key column of the entity's own table, in
    /// the order their columns follow the attributes in a row.
    package let foreignKeyIndexes: [Int]
    /// The destination entity of each of `foreignKeyIndexes`.
    package let foreignKeyDestinations: [EntityDescription]
    /// The foreign-key columns, in row order.
    package let foreignKeyColumns: [String]
    /// `SELECT` of every column of the entity's rows (key, version, attributes, foreign keys).
    package let selectRows: String
    /// `INSERT` of a whole row.
    package let insertRow: String

    init(entity: EntityDescription, storage: [RelationshipStorage], entities: [String: EntityDescription]) {
        self.storage = storage
        foreignKeyIndexes = storage.indices.filter {
            if case .foreignKey = storage[$0] { return true }
            return false
        }
        foreignKeyDestinations = foreignKeyIndexes.map { entities[entity.relationships[$0].destinationEntityName] ?? entity }
        foreignKeyColumns = foreignKeyIndexes.map {
            guard case .foreignKey(let column) = storage[$0] else { return "" }
            return column
        }
        selectRows = SQLBuilder.selectRows(entity, foreignKeyColumns: foreignKeyColumns)
        insertRow = SQLBuilder.insert(entity, foreignKeyColumns: foreignKeyColumns)
    }
}

/// The layouts of every entity of a store, by entity.
package struct SQLiteStoreLayout: Sendable {
    private let layouts: [ObjectIdentifier: SQLiteEntityLayout]

    /// The layouts of `entities` (a store's entities; relationships' destinations among them).
    package init(entities: [EntityDescription]) {
        let relationships = RelationshipLayout(entities: entities)
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var layouts: [ObjectIdentifier: SQLiteEntityLayout] = [:]
        for entity in entities {
            let storage = entity.relationships.map { relationships.storage[entity.name]![$0.name]! }
            layouts[ObjectIdentifier(entity)] = SQLiteEntityLayout(entity: entity, storage: storage, entities: byName)
        }
        self.layouts = layouts
    }

    /// The storage of relationship `index` of `entity`, or nil for an entity the store does not hold.
    package func storage(_ entity: EntityDescription, _ index: Int) -> RelationshipStorage? {
        layouts[ObjectIdentifier(entity)]?.storage[index]
    }

    /// The layout of `entity`.
    /// - Throws: ``SkerryError/Code/noStore`` for an entity the store does not hold (contexts ask
    ///   a store only about its own entities, so this guards against misrouted IDs).
    package func of(_ entity: EntityDescription) throws(SkerryError) -> SQLiteEntityLayout {
        guard let layout = layouts[ObjectIdentifier(entity)] else {
            throw SkerryError(.noStore, "This store does not hold entity '\(entity.name)'.", entityName: entity.name)
        }
        return layout
    }
}
