import Foundation

/// A row read from an old table during a migration: its values (attributes, and the keys of the
/// to-one relationships kept in its own table, by name) and its version.
struct MigrationSourceRow {
    let row: MigrationRow
    let version: Int64
}

extension SQLiteStore {
    /// Moves a table out of the way under `_retired_<name>`, without its indexes (whose names the
    /// new table's indexes take).
    static func retire(_ table: String, _ connection: SQLiteConnection) throws -> String {
        let q = SQLBuilder.quote
        let statement = try connection.cachedStatement(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
        try statement.bind([.string(table)])
        var indexes: [String] = []
        while try statement.step() { indexes.append(statement.text(at: 0)) }
        statement.reset()
        for index in indexes { try connection.execute("DROP INDEX \(q(index))") }
        let retired = "_retired_\(table)"
        try connection.execute("ALTER TABLE \(q(table)) RENAME TO \(q(retired))")
        return retired
    }

    /// The rows of an old entity, from its retired table.
    static func readSourceRows(
        _ entity: StoredSchema.Entity, table: String, layout: RelationshipLayout,
        _ connection: SQLiteConnection
    ) throws -> [MigrationSourceRow] {
        let q = SQLBuilder.quote
        let foreignKeys = entity.relationships.compactMap { relationship -> String? in
            if case .foreignKey(let column)? = layout.storage[entity.name]?[relationship.name] { return column }
            return nil
        }
        let columns = [SQLBuilder.primaryKeyColumn, SQLBuilder.versionColumn] + entity.attributes.map(\.name) + foreignKeys
        let statement = try connection.cachedStatement(
            "SELECT \(columns.map(q).joined(separator: ", ")) FROM \(q(table)) ORDER BY \(q(SQLBuilder.primaryKeyColumn))")
        defer { statement.reset() }
        var rows: [MigrationSourceRow] = []
        while try statement.step() {
            var values: [String: AttributeValue] = [:]
            for (index, attribute) in entity.attributes.enumerated() {
                guard let value = statement.value(at: Int32(index + 2), as: attribute.type) else {
                    throw SkerryError(
                        .undecodableValue,
                        "The stored value of '\(entity.name).\(attribute.name)' in row \(statement.int64(at: 0)) is not a valid \(attribute.type).",
                        entityName: entity.name, key: attribute.name)
                }
                values[attribute.name] = value
            }
            for (offset, column) in foreignKeys.enumerated() {
                let position = Int32(entity.attributes.count + 2 + offset)
                values[column] = statement.isNull(at: position) ? .null : .int(statement.int64(at: position))
            }
            rows.append(
                MigrationSourceRow(
                    row: MigrationRow(primaryKey: statement.int64(at: 0), values: values),
                    version: statement.int64(at: 1)))
        }
        return rows
    }

    /// Inserts a migrated row, checking every value against the new version's attribute: a value
    /// of another type, or a required attribute left without a value (and without a default),
    /// fails the step with a message naming the entity, attribute and row.
    static func insertMigratedRow(
        _ row: MigrationRow, version: Int64, into entity: EntityDescription, extraColumns: [String],
        extra: [String: AttributeValue], number: Int, _ connection: SQLiteConnection
    ) throws {
        let q = SQLBuilder.quote
        var values: [AttributeValue] = [.int(row.primaryKey), .int(version)]
        for attribute in entity.storedAttributes {
            var value = row.values[attribute.name] ?? attribute.defaultValue
            if value.isNull && !attribute.isOptional { value = attribute.defaultValue }
            guard value.fits(attribute.type), !value.isNaN else {
                throw SkerryError(
                    .wrongValueType,
                    "Step \(number): the value \(value) of '\(entity.name).\(attribute.name)' in row \(row.primaryKey) is not a \(attribute.type).",
                    entityName: entity.name, key: attribute.name)
            }
            if value.isNull && !attribute.isOptional {
                throw SkerryError(
                    .missingRequiredValue,
                    "Step \(number): the required attribute '\(entity.name).\(attribute.name)' of row \(row.primaryKey) has no value, and the attribute has no default value to give it.",
                    entityName: entity.name, key: attribute.name)
            }
            values.append(value)
        }
        for column in extraColumns { values.append(extra[column] ?? .null) }
        let columns = [SQLBuilder.primaryKeyColumn, SQLBuilder.versionColumn] + entity.storedAttributes.map(\.name) + extraColumns
        try connection.cachedStatement(
            "INSERT INTO \(q(entity.name)) (\(columns.map(q).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        )
        .run(values)
    }

    /// The context a plan step's `finish` gets: the old rows (retired tables) and inserts into
    /// the new tables.
    static func migrationContext(
        _ step: MigrationStepSpec, retired: [String: String], layout: RelationshipLayout,
        _ connection: SQLiteConnection
    ) -> MigrationContext {
        let sourceLayout = RelationshipLayout(schema: step.source)
        return MigrationContext(
            connection: connection, source: step.sourceEntities, destination: step.model,
            readSource: { entity in
                guard let stored = step.source.entity(named: entity.name) else { return [] }
                return try readSourceRows(stored, table: retired[entity.name] ?? entity.name, layout: sourceLayout, connection).map(\.row)
            },
            insertRow: { entity, values in
                let key = try nextPrimaryKey(entity, among: step.destination, connection)
                let extra = (layout.extraColumns[entity.name] ?? []).sorted()
                try insertMigratedRow(
                    MigrationRow(primaryKey: key, values: values), version: 1, into: entity, extraColumns: extra,
                    extra: values, number: step.number, connection)
                try connection.cachedStatement("INSERT OR REPLACE INTO \(SQLBuilder.quote(keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
                    .run([.string(keyRoot(entity, among: step.destination).name), .int(key + 1)])
                return key
            })
    }

    /// Checks, on the migrated tables, that every row of every kept entity and every link the
    /// new version can hold is there (a link a step's `transformRow` changed is the step's
    /// business); otherwise a ``SkerryError/Code/migrationWouldLoseData`` error names the entity
    /// or relationship and the counts.
    static func verifyMigration(
        _ mapping: SchemaMapping, expectedRows: [String: Set<Int64>],
        expectedLinks: [(entity: String, relationship: RelationshipDescription, links: LinkSet)],
        customized: Set<String>, layout: RelationshipLayout, _ connection: SQLiteConnection
    ) throws {
        let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
        func pairs(_ sql: String) throws -> Set<MigrationLink> {
            let statement = try connection.cachedStatement(sql)
            defer { statement.reset() }
            var result = Set<MigrationLink>()
            while try statement.step() { result.insert(MigrationLink(source: statement.int64(at: 0), target: statement.int64(at: 1))) }
            return result
        }
        for entityMapping in mapping.entities {
            let expected = expectedRows[entityMapping.source.name] ?? []
            let statement = try connection.cachedStatement("SELECT \(pk) FROM \(q(entityMapping.destination.name))")
            var found = Set<Int64>()
            while try statement.step() { found.insert(statement.int64(at: 0)) }
            statement.reset()
            let missing = expected.subtracting(found)
            guard missing.isEmpty else {
                throw SkerryError(
                    .migrationWouldLoseData,
                    "\(missing.count) of the \(expected.count) rows of '\(entityMapping.source.name)' are missing from '\(entityMapping.destination.name)' after the migration.",
                    entityName: entityMapping.destination.name)
            }
        }
        for (entity, relationship, links) in expectedLinks {
            let found: Set<MigrationLink>
            switch layout.storage[entity]?[relationship.name] {
            case .foreignKey(let column)?:
                if customized.contains("\(entity).\(column)") { continue }
                found = try pairs("SELECT \(pk), \(q(column)) FROM \(q(entity)) WHERE \(q(column)) IS NOT NULL")
            case .inverseForeignKey(let table, let column, _)?:
                if customized.contains("\(table).\(column)") { continue }
                found = try pairs("SELECT \(q(column)), \(pk) FROM \(q(table)) WHERE \(q(column)) IS NOT NULL")
            case .joinTable(let table, let sourceColumn, let targetColumn, _)?:
                found = try pairs("SELECT \(q(sourceColumn)), \(q(targetColumn)) FROM \(q(table))")
            case nil, .transient?:
                continue
            }
            let missing = Set(links.links.keys).subtracting(found)
            guard missing.isEmpty else {
                throw SkerryError(
                    .migrationWouldLoseData,
                    "\(missing.count) of the \(links.links.count) links of the relationship '\(entity).\(relationship.name)' are missing after the migration.",
                    entityName: entity, key: relationship.name)
            }
        }
    }

    /// Carries each kept entity's next key over to its new name, and forgets dropped entities'.
    static func carryKeys(_ mapping: SchemaMapping, _ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote
        let statement = try connection.cachedStatement("SELECT \"entity\", \"next\" FROM \(q(keysTable))")
        var next: [String: Int64] = [:]
        while try statement.step() { next[statement.text(at: 0)] = statement.int64(at: 1) }
        statement.reset()
        try connection.execute("DELETE FROM \(q(keysTable))")
        let insert = try connection.cachedStatement("INSERT INTO \(q(keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
        for entityMapping in mapping.entities {
            if let key = next[entityMapping.source.name] { try insert.run([.string(entityMapping.destination.name), .int(key)]) }
        }
    }
}
