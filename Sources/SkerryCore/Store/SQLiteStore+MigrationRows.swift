import Foundation

/// A row read from an old table during a migration: its values (attributes, and the keys of the
/// to-one relationships kept in its own table, by name) and its version.
struct MigrationSourceRow {
    let row: MigrationRow
    let version: Int64
}

extension SQLiteStore {
    /// Moves a table out of the way under `_retired_<name>`, without its indexes and triggers
    /// (whose names the new table's take).
    static func retire(_ table: String, _ connection: SQLiteConnection) throws -> String {
        let q = SQLBuilder.quote
        let statement = try connection.cachedStatement(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
        try statement.bind([.string(table)])
        var indexes: [String] = []
        while try statement.step() { indexes.append(statement.text(at: 0)) }
        statement.reset()
        for index in indexes { try connection.execute("DROP INDEX \(q(index))") }
        try dropFamilyTriggers(of: table, connection)
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
            // A derived attribute is computed once the step's rows and links are in place.
            if value.isNull && !attribute.isOptional && attribute.derivation == nil {
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

    /// The context a plan step's `finish` gets: the old rows (retired tables), inserts into
    /// the new tables, and where the step put the old rows (`keys`: nil in `prepare`).
    static func migrationContext(
        _ step: MigrationStepSpec, retired: [String: String], layout: RelationshipLayout, keys: MigrationKeys? = nil,
        _ connection: SQLiteConnection
    ) -> MigrationContext {
        let sourceLayout = RelationshipLayout(schema: step.source)
        return MigrationContext(
            source: step.sourceEntities, destination: step.model,
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
            }, keepsRow: step.custom?.keepsRow,
            carried: keys.map { CarriedRows(source: step.source, kept: $0.old, renumbered: $0.renumbered) })
    }

    /// Checks, on the migrated tables, that every row of every kept entity is there, under its
    /// key in the new store; otherwise a ``SkerryError/Code/migrationWouldLoseData`` error names
    /// the entity and the counts.
    static func verifyRows(_ mapping: SchemaMapping, keys: MigrationKeys, _ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
        for entityMapping in mapping.entities {
            let expected = keys.newKeys(entityMapping.source.name)
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
    }

    /// The keys of a step's rows: each old entity's, and each row's key in the new store (see
    /// ``MigrationKeys``), with the next key of each new hierarchy: past every key its rows had
    /// and every key the old store had handed out to its entities (recorded in the keys table).
    static func migrationKeys(
        _ mapping: SchemaMapping, rows: [String: [MigrationSourceRow]], step: MigrationStepSpec,
        _ connection: SQLiteConnection
    ) throws -> MigrationKeys {
        let statement = try connection.cachedStatement("SELECT \"entity\", \"next\" FROM \(SQLBuilder.quote(keysTable))")
        var recorded: [String: Int64] = [:]
        while try statement.step() { recorded[statement.text(at: 0)] = statement.int64(at: 1) }
        statement.reset()
        let parents = Dictionary(step.source.entities.map { ($0.name, $0.parent) }, uniquingKeysWith: { first, _ in first })
        func oldRoot(_ name: String) -> String {
            var root = name, seen: Set<String> = [name]
            while let parent = parents[root] ?? nil, parents[parent] != nil, seen.insert(parent).inserted { root = parent }
            return root
        }
        var hierarchies: [(root: String, members: [SchemaMapping.EntityMapping])] = []
        for entityMapping in mapping.entities {
            let root = keyRoot(entityMapping.destination, among: step.destination).name
            if let position = hierarchies.firstIndex(where: { $0.root == root }) {
                hierarchies[position].members.append(entityMapping)
            } else {
                hierarchies.append((root, [entityMapping]))
            }
        }
        var renumbered: [String: [Int64: Int64]] = [:], next: [String: Int64] = [:]
        for (root, members) in hierarchies {
            var claimed = Set<Int64>(), clashes: [(entity: String, key: Int64)] = []
            var carried: Int64 = 1
            for member in members {
                let name = member.source.name
                carried = max(carried, recorded[oldRoot(name)] ?? 1, recorded[name] ?? 1)
                for row in rows[name] ?? [] where !claimed.insert(row.row.primaryKey).inserted {
                    clashes.append((name, row.row.primaryKey))
                }
            }
            var fresh = max(carried, (claimed.max() ?? 0) + 1)
            for (entity, key) in clashes {
                renumbered[entity, default: [:]][key] = fresh
                fresh += 1
            }
            next[root] = fresh
        }
        return MigrationKeys(old: rows.mapValues { Set($0.map(\.row.primaryKey)) }, renumbered: renumbered, next: next)
    }

    /// Records the next key of each hierarchy of the new version under its root's name (keeping
    /// what a step's `finish` reserved), and forgets the old entities'.
    static func carryKeys(_ keys: MigrationKeys, entities: [EntityDescription], _ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote
        let statement = try connection.cachedStatement("SELECT \"entity\", \"next\" FROM \(q(keysTable))")
        var current: [String: Int64] = [:]
        while try statement.step() { current[statement.text(at: 0)] = statement.int64(at: 1) }
        statement.reset()
        try connection.execute("DELETE FROM \(q(keysTable))")
        let insert = try connection.cachedStatement("INSERT INTO \(q(keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
        for root in Set(entities.map { keyRoot($0, among: entities).name }).sorted() {
            let next = max(keys.next[root] ?? 0, current[root] ?? 0)
            if next > 0 { try insert.run([.string(root), .int(next)]) }
        }
    }
}

/// The keys of a migration step's rows. Keys are unique in a hierarchy. When the new version puts
/// in one hierarchy entities whose rows come from different old hierarchies (whose keys were
/// counted apart), a row whose key another row of the new hierarchy already has (one of an
/// entity that comes earlier in the model) gets a new key, past every key the hierarchy used;
/// every other row keeps its key.
struct MigrationKeys {
    /// The keys of each old entity's rows, by old entity name.
    let old: [String: Set<Int64>]
    /// Old entity name -> old key -> new key, for the rows whose key changes.
    let renumbered: [String: [Int64: Int64]]
    /// The next key of each new hierarchy, by the name of its root.
    let next: [String: Int64]

    /// The key in the new store of the row of old entity `entity` whose key was `key`.
    func newKey(_ entity: String, _ key: Int64) -> Int64 { renumbered[entity]?[key] ?? key }

    /// The keys in the new store of the rows of old entity `entity`.
    func newKeys(_ entity: String) -> Set<Int64> {
        guard let changes = renumbered[entity] else { return old[entity] ?? [] }
        return Set((old[entity] ?? []).map { changes[$0] ?? $0 })
    }
}
