import Foundation

extension SQLiteStore {
    /// A link of a relationship during a migration: the keys of the two objects and, where the
    /// old relationship was ordered, the position of each in the other's list.
    struct MigrationLink: Hashable {
        let source: Int64
        let target: Int64
    }

    /// The links of one relationship of the new version, gathered from the old store.
    struct LinkSet {
        var links: [MigrationLink: (sourcePosition: Int64?, targetPosition: Int64?)] = [:]

        mutating func add(_ link: MigrationLink, sourcePosition: Int64?, targetPosition: Int64?) {
            let old = links[link]
            links[link] = (sourcePosition ?? old?.sourcePosition, targetPosition ?? old?.targetPosition)
        }

        /// The targets of each source, in order (old positions first, then by key).
        func targetsBySource() -> [Int64: [Int64]] {
            var result: [Int64: [(Int64, Int64)]] = [:]
            for (link, positions) in links { result[link.source, default: []].append((positions.sourcePosition ?? .max, link.target)) }
            return result.mapValues { $0.sorted { $0 < $1 }.map(\.1) }
        }

        /// The sources of each target, in order.
        func sourcesByTarget() -> [Int64: [Int64]] {
            var result: [Int64: [(Int64, Int64)]] = [:]
            for (link, positions) in links { result[link.target, default: []].append((positions.targetPosition ?? .max, link.source)) }
            return result.mapValues { $0.sorted { $0 < $1 }.map(\.1) }
        }
    }

    /// What the new tables get besides attribute values: foreign-key and order columns by table,
    /// column and row key; join table rows.
    struct LinkColumns {
        var values: [String: [String: [Int64: Int64]]] = [:]
        var joinRows: [String: [[String: Int64]]] = [:]
    }

    /// One step: every old table steps aside, the new version's tables are made, rows are copied
    /// (through the step's `transformRow`), links are moved to where the new version keeps them,
    /// the step's `finish` runs, and every row and link the new version can hold is checked to be
    /// there before the old tables go. Runs inside a transaction.
    static func runMigrationStep(_ step: MigrationStepSpec, _ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote
        let mapping = SchemaMapping(
            from: step.source, to: step.destination,
            renamedAttributes: step.custom?.renamedAttributes ?? [:],
            renamedEntities: step.custom?.renamedEntities ?? [:],
            renamedRelationships: step.custom?.renamedRelationships ?? [:],
            convertsValues: step.custom?.transformRow != nil)
        let sourceLayout = RelationshipLayout(schema: step.source), destinationLayout = RelationshipLayout(entities: step.destination)
        var retired: [String: String] = [:]
        for entity in step.source.entities { retired[entity.name] = try retire(entity.name, connection) }
        for table in sourceLayout.joinTables.sorted() { retired[table] = try retire(table, connection) }
        for entity in step.destination {
            try createTableColumns(entity, named: entity.name, extraColumns: destinationLayout.extraColumns[entity.name] ?? [], connection)
        }
        for table in destinationLayout.joinTables.sorted() { try createJoinTable(table, connection) }

        var rows: [String: [MigrationSourceRow]] = [:]
        for entityMapping in mapping.entities {
            rows[entityMapping.source.name] = try readSourceRows(
                entityMapping.source, table: retired[entityMapping.source.name]!,
                layout: sourceLayout, connection)
        }
        let keys = rows.mapValues { Set($0.map(\.row.primaryKey)) }
        var expectedLinks: [(entity: String, relationship: RelationshipDescription, links: LinkSet)] = []
        var columns = LinkColumns()
        for entityMapping in mapping.entities {
            let entity = entityMapping.destination
            for (index, relationship) in entity.relationships.enumerated()
            where isMigratedFromThisSide(relationship, of: entity, in: step.destination) {
                let links = try gatherLinks(
                    entity: entity, index: index, mapping: mapping, keys: keys, retired: retired,
                    sourceLayout: sourceLayout, connection)
                guard !links.links.isEmpty else { continue }
                try place(links, of: relationship, entity: entity, layout: destinationLayout, into: &columns, number: step.number)
                expectedLinks.append((entity.name, relationship, links))
            }
        }

        var customizedForeignKeys = Set<String>()
        for entityMapping in mapping.entities {
            let entity = entityMapping.destination
            let extra = (destinationLayout.extraColumns[entity.name] ?? []).sorted()
            let sourceRows = rows[entityMapping.source.name] ?? []
            if step.custom?.transformRow == nil {
                try checkRequiredValues(entityMapping, rows: sourceRows, number: step.number)
            }
            for source in sourceRows {
                var row = MigrationRow(primaryKey: source.row.primaryKey, values: [:])
                for (attribute, old) in zip(entity.attributes, entityMapping.attributes) {
                    guard let old else {
                        row.values[attribute.name] = attribute.defaultValue
                        continue
                    }
                    let value = source.row.values[old.name] ?? .null
                    if let converted = SchemaMapping.convert(value, to: attribute.type) {
                        row.values[attribute.name] = converted
                    } else if step.custom?.transformRow != nil {
                        row.values[attribute.name] = value // the step's transformRow converts it
                    } else {
                        throw SkerryError(
                            .migrationWouldLoseData,
                            "Step \(step.number): the value \(value) of '\(entityMapping.source.name).\(old.name)' in row \(source.row.primaryKey) does not fit '\(entity.name).\(attribute.name)', which is \(attribute.type) now (it was \(old.type)).",
                            entityName: entity.name, key: attribute.name)
                    }
                }
                var computed: [String: AttributeValue] = [:]
                for column in extra {
                    computed[column] = columns.values[entity.name]?[column]?[source.row.primaryKey].map(AttributeValue.int) ?? .null
                }
                let foreignKeys = Set(
                    entity.relationships.compactMap { relationship -> String? in
                        if case .foreignKey(let column)? = destinationLayout.storage[entity.name]?[relationship.name] { return column }
                        return nil
                    })
                for column in foreignKeys { row.values[column] = computed[column] }
                try step.custom?.transformRow?(entity.name, source.row, &row)
                for column in foreignKeys where row.values[column] != computed[column] {
                    customizedForeignKeys.insert("\(entity.name).\(column)")
                    computed[column] = row.values[column] ?? .null
                }
                try insertMigratedRow(
                    row, version: source.version, into: entity, extraColumns: extra, extra: computed,
                    number: step.number, connection)
            }
        }
        for (table, joinRows) in columns.joinRows {
            let names = ["source", "target", "source_order", "target_order"]
            let statement = try connection.cachedStatement(
                "INSERT OR IGNORE INTO \(q(table)) (\(names.map(q).joined(separator: ", "))) VALUES (?, ?, ?, ?)")
            for row in joinRows {
                try statement.run(names.map { row[$0].map(AttributeValue.int) ?? .null })
            }
        }
        for entity in step.destination {
            try createIndexes(entity, extraColumns: destinationLayout.extraColumns[entity.name] ?? [], connection)
        }
        if let finish = step.custom?.finish {
            try finish(migrationContext(step, retired: retired, layout: destinationLayout, connection))
        }
        try verifyMigration(
            mapping, expectedRows: keys, expectedLinks: expectedLinks, customized: customizedForeignKeys,
            layout: destinationLayout, connection)
        for table in retired.values.sorted() { try connection.execute("DROP TABLE \(q(table))") }
        try carryKeys(mapping, connection)
        try writeModelMetadata(model: step.model, entities: step.destination, connection)
    }

    /// Fails when a required attribute without a default value would be left empty in some rows:
    /// new in this version, or optional before with rows that have no value (Core Data's
    /// lightweight migration fails the same way).
    private static func checkRequiredValues(_ mapping: SchemaMapping.EntityMapping, rows: [MigrationSourceRow], number: Int) throws {
        for (attribute, old) in zip(mapping.destination.attributes, mapping.attributes)
        where !attribute.isOptional && !attribute.isTransient && attribute.defaultValue.isNull && !rows.isEmpty {
            let empty = rows.filter { row in old.map { (row.row.values[$0.name] ?? .null).isNull } ?? true }.count
            guard empty > 0 else { continue }
            let why = old == nil ? "it is new in this model" : "it was optional"
            throw SkerryError(
                .missingRequiredValue,
                "Step \(number): '\(mapping.destination.name).\(attribute.name)' is required and has no default value, and \(empty) of the \(rows.count) rows of '\(mapping.source.name)' have no value for it (\(why)); Core Data's lightweight migration fails the same way. Give the attribute a default value, or migrate with a MigrationPlan step (or a mapping model) that sets it.",
                entityName: mapping.destination.name, key: attribute.name)
        }
    }

    /// Whether the links of `relationship` are gathered and written from its side: each pair
    /// once, from the side that keeps the most (the to-many side of a one-to-many pair, for its
    /// order; otherwise the side whose "Entity.name" sorts first).
    static func isMigratedFromThisSide(
        _ relationship: RelationshipDescription, of entity: EntityDescription,
        in entities: [EntityDescription]
    ) -> Bool {
        guard let inverseName = relationship.inverseName,
            let inverse = entities.first(where: { $0.name == relationship.destinationEntityName })?.relationship(named: inverseName)
        else {
            return true
        }
        if relationship.isToMany != inverse.isToMany { return relationship.isToMany }
        return "\(entity.name).\(relationship.name)" <= "\(relationship.destinationEntityName).\(inverseName)"
    }

    /// The links the relationship at `index` of `entity` (a new entity) takes from the old
    /// store: those of the old relationship it matched, and those of the old relationship its
    /// inverse matched (read from the other side), between objects that both still exist.
    private static func gatherLinks(
        entity: EntityDescription, index: Int, mapping: SchemaMapping, keys: [String: Set<Int64>],
        retired: [String: String], sourceLayout: RelationshipLayout,
        _ connection: SQLiteConnection
    ) throws -> LinkSet {
        var set = LinkSet()
        let relationship = entity.relationships[index]
        guard let entityMapping = mapping.mapping(ofDestination: entity.name),
            let destinationMapping = mapping.mapping(ofDestination: relationship.destinationEntityName)
        else { return set }
        let sourceKeys = keys[entityMapping.source.name] ?? [], targetKeys = keys[destinationMapping.source.name] ?? []
        if let old = entityMapping.relationships[index], old.destination == destinationMapping.source.name {
            for (source, target, position) in try readLinks(
                old, of: entityMapping.source.name, layout: sourceLayout, retired: retired, connection)
            where sourceKeys.contains(source) && targetKeys.contains(target) {
                set.add(MigrationLink(source: source, target: target), sourcePosition: position, targetPosition: nil)
            }
        }
        if let inverseName = relationship.inverseName,
            let inverseIndex = destinationMapping.destination.relationshipIndex(named: inverseName),
            let oldInverse = destinationMapping.relationships[inverseIndex], oldInverse.destination == entityMapping.source.name
        {
            for (source, target, position) in try readLinks(
                oldInverse, of: destinationMapping.source.name, layout: sourceLayout,
                retired: retired, connection)
            where targetKeys.contains(source) && sourceKeys.contains(target) {
                set.add(MigrationLink(source: target, target: source), sourcePosition: nil, targetPosition: position)
            }
        }
        return set
    }

    /// The links of an old relationship as (object, related object, the related object's position
    /// in the object's list when the relationship is ordered), read where the old layout kept them.
    private static func readLinks(
        _ relationship: StoredSchema.Relationship, of entity: String, layout: RelationshipLayout,
        retired: [String: String], _ connection: SQLiteConnection
    ) throws -> [(Int64, Int64, Int64?)] {
        let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
        let sql: String
        switch layout.storage[entity]?[relationship.name] {
        case .foreignKey(let column)?:
            sql = "SELECT \(pk), \(q(column)), NULL FROM \(q(retired[entity] ?? entity)) WHERE \(q(column)) IS NOT NULL"
        case .inverseForeignKey(let table, let column, let orderColumn)?:
            sql =
                "SELECT \(q(column)), \(pk), \(orderColumn.map(q) ?? "NULL") FROM \(q(retired[table] ?? table)) WHERE \(q(column)) IS NOT NULL"
        case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn)?:
            sql = "SELECT \(q(sourceColumn)), \(q(targetColumn)), \(orderColumn.map(q) ?? "NULL") FROM \(q(retired[table] ?? table))"
        case nil, .transient?:
            return []
        }
        let statement = try connection.cachedStatement(sql)
        defer { statement.reset() }
        var links: [(Int64, Int64, Int64?)] = []
        while try statement.step() {
            links.append((statement.int64(at: 0), statement.int64(at: 1), statement.isNull(at: 2) ? nil : statement.int64(at: 2)))
        }
        return links
    }

    /// Puts the links of `relationship` (of the new `entity`) where the new layout keeps them; a
    /// to-one side that would hold several objects is a ``SkerryError/Code/migrationWouldLoseData``
    /// error: the old data does not fit the new model.
    private static func place(
        _ links: LinkSet, of relationship: RelationshipDescription, entity: EntityDescription,
        layout: RelationshipLayout, into columns: inout LinkColumns, number: Int
    ) throws {
        func doesNotFit(_ side: String, _ holders: [Int64: [Int64]], holder entityName: String) -> SkerryError {
            let crowded = holders.filter { $0.value.count > 1 }
            return SkerryError(
                .migrationWouldLoseData,
                "Step \(number): \(side) is to-one in the new model, but \(crowded.count) object(s) of '\(entityName)' hold several objects in it (up to \(crowded.values.map(\.count).max() ?? 0), \(links.links.count) links in all); a to-one relationship can keep only one of them.",
                entityName: entity.name, key: relationship.name)
        }
        let inverse = relationship.inverseName.map { "'\(relationship.destinationEntityName).\($0)'" }
        switch layout.storage[entity.name]?[relationship.name] {
        case .foreignKey(let column)?:
            let targets = links.targetsBySource()
            if targets.values.contains(where: { $0.count > 1 }) {
                throw doesNotFit("the relationship '\(entity.name).\(relationship.name)'", targets, holder: entity.name)
            }
            for (source, list) in targets { columns.values[entity.name, default: [:]][column, default: [:]][source] = list[0] }
        case .inverseForeignKey(let table, let column, let orderColumn)?:
            let sources = links.sourcesByTarget()
            if sources.values.contains(where: { $0.count > 1 }) {
                throw doesNotFit("the inverse \(inverse ?? "") of '\(entity.name).\(relationship.name)'", sources, holder: table)
            }
            for (target, list) in sources { columns.values[table, default: [:]][column, default: [:]][target] = list[0] }
            if let orderColumn {
                for (_, list) in links.targetsBySource() {
                    for (position, target) in list.enumerated() {
                        columns.values[table, default: [:]][orderColumn, default: [:]][target] = Int64(position)
                    }
                }
            }
        case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn)?:
            var rows: [MigrationLink: [String: Int64]] = [:]
            for (source, list) in links.targetsBySource() {
                for (position, target) in list.enumerated() {
                    var row = [sourceColumn: source, targetColumn: target]
                    if let orderColumn { row[orderColumn] = Int64(position) }
                    rows[MigrationLink(source: source, target: target)] = row
                }
            }
            if relationship.inverseName != nil {
                let inverseOrder = targetColumn + "_order"
                for (target, list) in links.sourcesByTarget() {
                    for (position, source) in list.enumerated() {
                        rows[MigrationLink(source: source, target: target)]?[inverseOrder] = Int64(position)
                    }
                }
            }
            columns.joinRows[table, default: []] += rows.keys.sorted { ($0.source, $0.target) < ($1.source, $1.target) }.map { rows[$0]! }
        case nil, .transient?:
            break
        }
    }
}
