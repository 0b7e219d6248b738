import Foundation

extension SQLiteStore {
    /// One step: every old table steps aside, the new version's tables are made, the step's
    /// `prepare` runs, the rows its `keepsRow` keeps are copied (through its `transformRow`),
    /// links between kept rows are moved to where the new version keeps them,
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

        if let prepare = step.custom?.prepare {
            try prepare(migrationContext(step, retired: retired, layout: destinationLayout, connection).readingOnly())
        }
        var rows: [String: [MigrationSourceRow]] = [:]
        for entityMapping in mapping.entities {
            var read = try readSourceRows(
                entityMapping.source, table: retired[entityMapping.source.name]!,
                layout: sourceLayout, connection)
            // Rows the step leaves out have no key in the new store: no link reaches them.
            if let keepsRow = step.custom?.keepsRow {
                read = try read.filter { try keepsRow(entityMapping.destination.name, $0.row) }
            }
            rows[entityMapping.source.name] = read
        }
        let keys = try migrationKeys(mapping, rows: rows, step: step, connection)
        var expectedLinks: [(group: LinkGroup, links: LinkSet)] = []
        var columns = LinkColumns()
        var reader = LinkReader(connection: connection, mapping: mapping, keys: keys, retired: retired, sourceLayout: sourceLayout)
        let groups = linkGroups(step.destination)
        for group in groups where isMigratedFromThisSide(group, in: step.destination) {
            let links = try reader.gather(group, groups: groups, in: step.destination)
            guard !links.links.isEmpty else { continue }
            try place(links, of: group, in: step.destination, layout: destinationLayout, into: &columns, number: step.number)
            expectedLinks.append((group, links))
        }

        var customizedForeignKeys = Set<String>()
        // (A mapping model's transformRow looks up the new keys of the rows its paths reach.)
        let carried = CarriedRows(source: step.source, kept: keys.old, renumbered: keys.renumbered)
        try CarriedRows.$current.withValue(carried) {
            for entityMapping in mapping.entities {
                let entity = entityMapping.destination
                let extra = (destinationLayout.extraColumns[entity.name] ?? []).sorted()
                let sourceRows = rows[entityMapping.source.name] ?? []
                if step.custom?.transformRow == nil {
                    try checkRequiredValues(entityMapping, rows: sourceRows, number: step.number)
                }
                for source in sourceRows {
                    let key = keys.newKey(entityMapping.source.name, source.row.primaryKey)
                    var row = MigrationRow(primaryKey: key, values: [:])
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
                        computed[column] = columns.values[entity.name]?[column]?[key].map(AttributeValue.int) ?? .null
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
        try syncFamilyUniqueness(step.destination, connection)
        if let finish = step.custom?.finish {
            try finish(migrationContext(step, retired: retired, layout: destinationLayout, keys: keys, connection))
        }
        // Derived attributes new or changed in this version, or made stale by the step's code, get
        // their values in every row.
        try schema.fillDerivedAttributes(of: step, mapping, connection)
        if step.checksLinks { try schema.checkMigratedLinks(of: step, mapping, connection) }
        try verifyRows(mapping, keys: keys, connection)
        try verifyLinks(expectedLinks, customized: customizedForeignKeys, layout: destinationLayout, connection)
        for table in retired.values.sorted() { try connection.execute("DROP TABLE \(q(table))") }
        try carryKeys(keys, entities: step.destination, connection)
        try writeModelMetadata(model: step.model, entities: step.destination, connection)
    }

    /// Fails when a required attribute without a default value would be left empty in some rows:
    /// new in this version, or optional before with rows that have no value (Core Data's
    /// lightweight migration fails the same way).
    private static func checkRequiredValues(_ mapping: SchemaMapping.EntityMapping, rows: [MigrationSourceRow], number: Int) throws {
        for (attribute, old) in zip(mapping.destination.attributes, mapping.attributes)
        where !attribute.isOptional && !attribute.isTransient && attribute.defaultValue.isNull && attribute.derivation == nil
            && !rows.isEmpty
        {
            let empty = rows.filter { row in old.map { (row.row.values[$0.name] ?? .null).isNull } ?? true }.count
            guard empty > 0 else { continue }
            let why = old == nil ? "it is new in this model" : "it was optional"
            throw SkerryError(
                .missingRequiredValue,
                "Step \(number): '\(mapping.destination.name).\(attribute.name)' is required and has no default value, and \(empty) of the \(rows.count) rows of '\(mapping.source.name)' have no value for it (\(why)); Core Data's lightweight migration fails the same way. Give the attribute a default value, or migrate with a MigrationPlan step (or a mapping model) that sets it.",
                entityName: mapping.destination.name, key: attribute.name)
        }
    }
}
