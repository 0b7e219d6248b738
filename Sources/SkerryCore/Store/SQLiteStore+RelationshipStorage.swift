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
///   `target_order` columns (the order of the side that owns the table, and of the other side,
///   each written by its own side when it is ordered); a relationship that is its own inverse
///   keeps both directions of each link there;
/// - a transient relationship is not stored; a stored relationship whose inverse is transient
///   is stored as if it had no inverse (a to-one in its own column, a to-many in its own join
///   table).
///
/// With entity inheritance, every entity of a hierarchy has its own table, and keys are unique
/// in the hierarchy. A relationship is stored as declared by the topmost entity that has it
/// ("Entity" above is that entity): an inherited foreign-key column is in each sub-entity's
/// table under the same name, an order column in the destination's table and its
/// sub-entities', and an inherited to-many relationship shares its declaring entity's join
/// table.
package enum RelationshipStorage: Sendable, Hashable {
    /// A column of the source entity's table that holds the destination's key.
    case foreignKey(column: String)
    /// The destination table's foreign-key column that points back at the source; `orderColumn`
    /// (in the destination table) keeps the order of an ordered to-many relationship.
    case inverseForeignKey(table: String, column: String, orderColumn: String?)
    /// A join table; this side's keys are in `sourceColumn`, the related keys in `targetColumn`.
    case joinTable(table: String, sourceColumn: String, targetColumn: String, orderColumn: String?)
    /// Not stored: a transient relationship, which lives in memory only and reads as empty
    /// from the store.
    case transient

    /// Whether saving the relationship's changes writes something for this side (the side that
    /// holds the foreign key, the ordered side of an inverse key, the owner of a join table, and
    /// the other side of a join table when it is ordered: its order is in the `target_order`
    /// column, which only its own list can tell).
    package var isWrittenBySource: Bool {
        switch self {
        case .foreignKey: return true
        case .inverseForeignKey(_, _, let orderColumn): return orderColumn != nil
        case .joinTable(_, let sourceColumn, _, let orderColumn): return sourceColumn == "source" || orderColumn != nil
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
        /// The topmost entity of the hierarchy that has the relationship.
        var declaredIn: String
    }

    /// Storage by entity name, then relationship name.
    package let storage: [String: [String: RelationshipStorage]]
    /// The direct sub-entities of each entity that has some, by name.
    let subentities: [String: [String]]

    init(_ relationships: [Relationship], parents: [String: String]) {
        var subentities: [String: [String]] = [:]
        for (child, parent) in parents.sorted(by: { $0.key < $1.key }) { subentities[parent, default: []].append(child) }
        self.subentities = subentities
        let byKey = Dictionary(relationships.map { ("\($0.entity).\($0.name)", $0) }, uniquingKeysWith: { first, _ in first })
        var storage: [String: [String: RelationshipStorage]] = [:]
        for r in relationships {
            // A transient inverse is not stored: the stored side is kept as if it had no inverse
            // (Core Data saves every property that is not transient, whatever its inverse).
            let inverse = r.inverse.flatMap { byKey["\(r.destination).\($0)"] }.flatMap { $0.isTransient ? nil : $0 }
            let ownsPair = inverse.map { "\(r.declaredIn).\(r.name)" <= "\($0.declaredIn).\($0.name)" } ?? true
            let value: RelationshipStorage
            switch (r.isToMany, inverse?.isToMany) {
            case _ where r.isTransient:
                value = .transient
            case (false, false?):
                value =
                    ownsPair
                    ? .foreignKey(column: r.name)
                    : .inverseForeignKey(table: r.destination, column: inverse!.name, orderColumn: nil)
            case (false, _):
                value = .foreignKey(column: r.name)
            case (true, false?):
                value = .inverseForeignKey(
                    table: r.destination, column: inverse!.name,
                    orderColumn: r.isOrdered ? "_\(r.declaredIn)_\(r.name)_order" : nil)
            case (true, _):
                let owner = ownsPair ? r : inverse!
                let mine = ownsPair
                value = .joinTable(
                    table: "_\(owner.declaredIn)_\(owner.name)",
                    sourceColumn: mine ? "source" : "target", targetColumn: mine ? "target" : "source",
                    orderColumn: r.isOrdered ? (mine ? "source_order" : "target_order") : nil)
            }
            storage[r.entity, default: [:]][r.name] = value
        }
        self.storage = storage
    }

    package init(entities: [EntityDescription]) {
        func declaringEntity(_ entity: EntityDescription, _ name: String) -> String {
            Self.declaringEntity(ofRelationship: name, in: entity).name
        }
        var parents: [String: String] = [:]
        for entity in entities { parents[entity.name] = entity.superentity?.name }
        self.init(
            entities.flatMap { entity in
                entity.relationships.map {
                    Relationship(
                        entity: entity.name, name: $0.name, destination: $0.destinationEntityName,
                        inverse: $0.inverseName, isToMany: $0.isToMany, isOrdered: $0.isOrdered, isTransient: $0.isTransient,
                        declaredIn: declaringEntity(entity, $0.name))
                }
            }, parents: parents)
    }

    package init(schema: StoredSchema) {
        let byName = Dictionary(schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func declaringEntity(_ entity: StoredSchema.Entity, _ name: String) -> String {
            var declaring = entity, seen: Set<String> = [entity.name]
            while let parent = declaring.parent.flatMap({ byName[$0] }), parent.relationship(named: name) != nil,
                seen.insert(parent.name).inserted
            { declaring = parent }
            return declaring.name
        }
        var parents: [String: String] = [:]
        for entity in schema.entities { parents[entity.name] = entity.parent }
        self.init(
            schema.entities.flatMap { entity in
                entity.relationships.map {
                    Relationship(
                        entity: entity.name, name: $0.name, destination: $0.destination,
                        inverse: $0.inverse, isToMany: $0.isToMany, isOrdered: $0.isOrdered,
                        declaredIn: declaringEntity(entity, $0.name))
                }
            }, parents: parents)
    }

    /// The topmost entity of `entity`'s hierarchy that has the relationship named `name` (the
    /// entity that declares it; `entity` itself when it does).
    package static func declaringEntity(ofRelationship name: String, in entity: EntityDescription) -> EntityDescription {
        var declaring = entity
        while let parent = declaring.superentity, parent.relationship(named: name) != nil { declaring = parent }
        return declaring
    }

    /// `name` and its sub-entities at any depth.
    package func entityAndSubentities(_ name: String) -> [String] {
        var result = [name], next = 0
        while next < result.count {
            for child in subentities[result[next]] ?? [] where !result.contains(child) { result.append(child) }
            next += 1
        }
        return result
    }

    /// The foreign-key and order columns each table gets, by table name.
    package var extraColumns: [String: Set<String>] {
        var columns: [String: Set<String>] = [:]
        for (entity, relationships) in storage {
            for value in relationships.values {
                switch value {
                case .foreignKey(let column): columns[entity, default: []].insert(column)
                case .inverseForeignKey(let table, _, let orderColumn?):
                    // The destination's sub-entities are members too: their tables get the column.
                    for member in entityAndSubentities(table) { columns[member, default: []].insert(orderColumn) }
                default: break
                }
            }
        }
        return columns
    }

    /// The join tables.
    package var joinTables: Set<String> {
        Set(
            storage.values.flatMap(\.values).compactMap {
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
    /// With a store identity: the space of the entity's (permanent) IDs, and of each of
    /// `foreignKeyIndexes`' destinations, so that reading a row makes its IDs without a look-up.
    package let spaces: (own: ObjectIDSpace, foreignKeyDestinations: [ObjectIDSpace])?
    /// The space of the entity's IDs, for a layout made with a store identity (as the SQLite
    /// store's are; a precondition otherwise).
    var space: ObjectIDSpace { spaces!.own }
    /// The ID space of each of `foreignKeyIndexes`' destinations (a layout made with an identity).
    var foreignKeyDestinationSpaces: [ObjectIDSpace] { spaces!.foreignKeyDestinations }
    /// The foreign-key columns, in row order.
    package let foreignKeyColumns: [String]
    /// For each of `foreignKeyIndexes` whose destination has sub-entities, its position in
    /// `foreignKeyIndexes`: the rows of `selectRows` end with one column per such relationship,
    /// the code of the related row's entity (see ``SQLiteStoreLayout/entity(code:)``).
    package let foreignKeyEntityColumns: [Int]
    /// `SELECT` of every column of the entity's rows (key, version, attributes, foreign keys, then
    /// the entity codes of `foreignKeyEntityColumns`).
    package let selectRows: String
    /// `INSERT` of a whole row.
    package let insertRow: String
}

/// The layouts of every entity of a store, by entity, and how to read an entity together with
/// its sub-entities: each has its own table, and a read of the entity reads the union of its
/// family's tables, each row tagged with its entity's code (its position in the store's
/// entities).
package struct SQLiteStoreLayout: Sendable {
    private let layouts: [ObjectIdentifier: SQLiteEntityLayout]
    /// The store's entities; an entity's code is its position here.
    package let entities: [EntityDescription]
    private let codes: [ObjectIdentifier: Int]
    /// With a store identity: the space of each entity's (permanent) IDs, by code.
    private let codeSpaces: [ObjectIDSpace]?
    /// For each entity with sub-entities in the store: the entity and its sub-entities, as codes.
    private let families: [ObjectIdentifier: [Int]]
    /// For each entity with sub-entities: the columns its family's tables share.
    private let familyColumns: [ObjectIdentifier: [String]]

    /// The layouts of `entities` (a store's entities; relationships' destinations among them),
    /// with the ID spaces of the store `identity` when given.
    ///
    /// `unstored` names storage that the store lacks and cannot get (a read-only store written
    /// before Skerry stored a relationship whose inverse is transient): join tables by name,
    /// foreign-key columns as "Table.column". A relationship kept there reads as empty, as a
    /// transient one.
    package init(entities: [EntityDescription], identity: StoreIdentity? = nil, unstored: Set<String> = []) {
        let relationships = RelationshipLayout(entities: entities)
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.entities = entities
        var codes: [ObjectIdentifier: Int] = [:]
        for (code, entity) in entities.enumerated() { codes[ObjectIdentifier(entity)] = code }
        self.codes = codes
        codeSpaces = identity.map { identity in entities.map { identity.space(for: $0, temporary: false) } }
        var families: [ObjectIdentifier: [Int]] = [:]
        var familyColumns: [ObjectIdentifier: [String]] = [:]
        let extraColumns = relationships.extraColumns
        for entity in entities {
            let family = entities.indices.filter { entities[$0].isKind(of: entity) }
            guard family.count > 1 else { continue }
            families[ObjectIdentifier(entity)] = family
            familyColumns[ObjectIdentifier(entity)] =
                entity.storedAttributes.map(\.name)
                + (extraColumns[entity.name] ?? []).filter { !unstored.contains("\(entity.name).\($0)") }.sorted()
        }
        self.families = families
        self.familyColumns = familyColumns
        var layouts: [ObjectIdentifier: SQLiteEntityLayout] = [:]
        for entity in entities {
            let storage = entity.relationships.map { relationship -> RelationshipStorage in
                let storage = relationships.storage[entity.name]![relationship.name]!
                switch storage {
                case .joinTable(let table, _, _, _) where unstored.contains(table): return .transient
                case .foreignKey(let column) where unstored.contains("\(entity.name).\(column)"): return .transient
                default: return storage
                }
            }
            let foreignKeyIndexes = storage.indices.filter {
                if case .foreignKey = storage[$0] { return true }
                return false
            }
            let destinations = foreignKeyIndexes.map { byName[entity.relationships[$0].destinationEntityName] ?? entity }
            let columns = foreignKeyIndexes.map {
                guard case .foreignKey(let column) = storage[$0] else { return "" }
                return column
            }
            let entityColumns = destinations.indices.filter { families[ObjectIdentifier(destinations[$0])] != nil }
            let table = SQLBuilder.quote(entity.name)
            let codeColumns = entityColumns.map { position in
                Self.entityCode(destinations[position], families, entities, key: "\(table).\(SQLBuilder.quote(columns[position]))")
            }
            layouts[ObjectIdentifier(entity)] = SQLiteEntityLayout(
                storage: storage, foreignKeyIndexes: foreignKeyIndexes, foreignKeyDestinations: destinations,
                spaces: identity.map { identity in
                    (identity.space(for: entity, temporary: false), destinations.map { identity.space(for: $0, temporary: false) })
                },
                foreignKeyColumns: columns, foreignKeyEntityColumns: entityColumns,
                selectRows: SQLBuilder.selectRows(entity, foreignKeyColumns: columns, extraExpressions: codeColumns),
                insertRow: SQLBuilder.insert(entity, foreignKeyColumns: columns))
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

    /// The store's entity named `name`, or nil.
    package func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// The entity of `code` (a store's entity), or nil for a code that names none.
    package func entity(code: Int64) -> EntityDescription? {
        code >= 0 && code < Int64(entities.count) ? entities[Int(code)] : nil
    }

    /// The space of the IDs of the entity of `code`, or nil for a code that names none (a layout
    /// made with a store identity; a precondition otherwise).
    package func space(code: Int64) -> ObjectIDSpace? {
        code >= 0 && code < Int64(entities.count) ? codeSpaces![Int(code)] : nil
    }

    /// The entity and its sub-entities held by the store, when it has sub-entities; nil otherwise.
    package func family(_ entity: EntityDescription) -> [EntityDescription]? {
        families[ObjectIdentifier(entity)].map { $0.map { entities[$0] } }
    }

    /// What a read of `entity` and its sub-entities selects from: the entity's table when it has
    /// no sub-entities; otherwise the union of its family's tables (key, version, `_entity` code,
    /// the entity's attributes and relationship columns), to be named with `AS`.
    package func source(_ entity: EntityDescription) -> String {
        guard let family = families[ObjectIdentifier(entity)], let columns = familyColumns[ObjectIdentifier(entity)] else {
            return SQLBuilder.quote(entity.name)
        }
        let q = SQLBuilder.quote
        let list = columns.map { ", " + q($0) }.joined()
        return "("
            + family.map { code in
                "SELECT \(q(SQLBuilder.primaryKeyColumn)), \(q(SQLBuilder.versionColumn)), \(code) AS \(q(SQLBuilder.entityColumn))\(list) FROM \(q(entities[code].name))"
            }.joined(separator: " UNION ALL ") + ")"
    }

    /// The code of the entity of the row of `destination`'s family whose key is `key` (an SQL
    /// expression), when `destination` has sub-entities; nil otherwise (the row is of
    /// `destination` itself).
    package func entityCode(_ destination: EntityDescription, key: String) -> String? {
        families[ObjectIdentifier(destination)] == nil ? nil : Self.entityCode(destination, families, entities, key: key)
    }

    private static func entityCode(
        _ destination: EntityDescription, _ families: [ObjectIdentifier: [Int]],
        _ entities: [EntityDescription], key: String
    ) -> String {
        let family = families[ObjectIdentifier(destination)] ?? []
        let q = SQLBuilder.quote
        // Keys are unique in a hierarchy: the one table that has the key names the entity.
        let cases = family.dropLast().map { code in
            "WHEN EXISTS (SELECT 1 FROM \(q(entities[code].name)) AS \(q("_family")) WHERE \(q("_family")).\(q(SQLBuilder.primaryKeyColumn)) = \(key)) THEN \(code)"
        }
        return "CASE " + cases.joined(separator: " ") + " ELSE \(family.last ?? 0) END"
    }
}
