import Foundation

extension SQLiteStore {
    /// Before a file store opens: if it was written with an older version of `plan`, migrates a
    /// copy of it one step at a time and puts the copy in place of the original. A failed step
    /// throws and leaves the original exactly as it was.
    static func migrateProgressively(_ url: URL, description: StoreDescription, plan: MigrationPlan,
                                     events: EventHub? = nil) throws(SkerryError) {
        guard FileManager.default.fileExists(atPath: url.path), let current = plan.versions.last else { return }
        let start: Int
        do {
            let original = try SQLiteConnection(path: url.path, readOnly: false, busyTimeout: description.busyTimeout)
            guard let hash = try? readMetadata(original)["modelVersionHash"],
                  let index = plan.versions.firstIndex(where: { $0.versionHash == hash }), index < plan.versions.count - 1 else {
                return        // not a version of the plan, or the current one: the ordinary load decides
            }
            start = index
            let copy = url.path + ".migrating"
            try? FileManager.default.removeItem(atPath: copy)
            try original.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            try original.cachedStatement("VACUUM INTO ?").run([.string(copy)])
        } catch {
            throw SkerryError(.storeLoadFailed, "Cannot prepare the migration of \(description): \(SkerryError.converting(error).message)")
        }
        let copyPath = url.path + ".migrating"
        do {
            do {
                let connection = try SQLiteConnection(path: copyPath, readOnly: false, busyTimeout: description.busyTimeout)
                let steps = plan.versions.count - 1 - start
                for index in start..<(plan.versions.count - 1) {
                    plan.progress?(index - start + 1, steps)
                    let stepStarted = ContinuousClock.now
                    let entities = { (model: ObjectModel) in model.entities.filter { description.holds($0) } }
                    try connection.writeTransaction {
                        try migrateStep(connection, from: entities(plan.versions[index]), to: plan.versions[index + 1],
                                        entities: entities(plan.versions[index + 1]), step: plan.steps[index], number: index + 1)
                    }
                    events?.emit(.migrationStep(MigrationStepEvent(
                        store: description, step: index - start + 1, stepCount: steps,
                        fromVersionHash: plan.versions[index].versionHash, toVersionHash: plan.versions[index + 1].versionHash,
                        summary: plan.steps[index] == nil ? "version \(index + 1) to \(index + 2)" : "version \(index + 1) to \(index + 2), custom step",
                        duration: .now - stepStarted)))
                }
            }   // the copy's connection closes here
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            guard rename(copyPath, url.path) == 0 else {
                throw SkerryError(.storeLoadFailed, "Cannot put the migrated store in place of \(url.path).")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: copyPath)
            let reason = SkerryError.converting(error)
            var failure = SkerryError(.modelMismatch,
                                      "The migration of \(description) to its current model (\(current.versionHash)) failed: \(reason.message) The store was left as it was.",
                                      entityName: reason.entityName, key: reason.key, sqlite: reason.sqlite)
            failure.objectIDs = reason.objectIDs
            throw failure
        }
    }

    /// One step: the tables of entities whose shape changed are rebuilt, rows copied through the
    /// step's transform; new entities get tables, dropped ones lose theirs; then the metadata
    /// records the new version.
    private static func migrateStep(_ connection: SQLiteConnection, from source: [EntityDescription], to model: ObjectModel,
                                    entities destination: [EntityDescription], step: MigrationStep?, number: Int) throws {
        let q = SQLBuilder.quote
        let sourceLayout = RelationshipLayout(entities: source), destinationLayout = RelationshipLayout(entities: destination)
        let sourceSchema = StoredSchema(entities: source), destinationSchema = StoredSchema(entities: destination)
        var retired: [String] = []
        for entity in destination {
            let extra = destinationLayout.extraColumns[entity.name] ?? []
            guard let old = source.first(where: { $0.name == entity.name }) else {
                try createTable(entity, extraColumns: extra, connection)
                continue
            }
            let oldExtra = sourceLayout.extraColumns[old.name] ?? []
            let unchanged = sourceSchema.entity(named: old.name) == destinationSchema.entity(named: entity.name) && oldExtra == extra
            if unchanged && step?.transformRow == nil && step?.renamedAttributes.isEmpty != false { continue }
            // Rebuild: the old table steps aside, a new one takes its name.
            let retiredName = try retire(old.name, connection)
            retired.append(retiredName)
            try createTableColumns(entity, named: entity.name, extraColumns: extra, connection)
            let rows = try readRows(old, table: retiredName, extraColumns: oldExtra, layout: sourceLayout, connection)
            try copyRows(rows, from: old, to: entity, extraColumns: extra, layout: destinationLayout, step: step, number: number, connection)
            try createIndexes(entity, extraColumns: extra, connection)
        }
        for old in source where !destination.contains(where: { $0.name == old.name }) {
            retired.append(try retire(old.name, connection))
        }
        for table in destinationLayout.joinTables.subtracting(sourceLayout.joinTables).sorted() {
            try createJoinTable(table, connection)
        }
        if let finish = step?.finish {
            let context = MigrationContext(
                connection: connection, source: source, destination: model,
                readSource: { entity in
                    let table = retired.contains("_retired_\(entity.name)") ? "_retired_\(entity.name)" : entity.name
                    return try readRows(entity, table: table, extraColumns: sourceLayout.extraColumns[entity.name] ?? [],
                                        layout: sourceLayout, connection).map(\.row)
                },
                insertRow: { entity, values in
                    let key = try nextPrimaryKey(entity, connection)
                    try insert(MigrationRow(primaryKey: key, values: values), version: 1, into: entity, extra: [:],
                               extraColumns: destinationLayout.extraColumns[entity.name] ?? [], layout: destinationLayout,
                               number: number, connection)
                    try connection.cachedStatement("INSERT OR REPLACE INTO \(q(keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
                        .run([.string(entity.name), .int(key + 1)])
                    return key
                })
            try finish(context)
        }
        for table in retired { try connection.execute("DROP TABLE \(q(table))") }
        for table in sourceLayout.joinTables.subtracting(destinationLayout.joinTables).sorted() {
            try connection.execute("DROP TABLE IF EXISTS \(q(table))")
        }
        try writeModelMetadata(model: model, entities: destination, connection)
    }

    /// Moves a table out of the way under `_retired_<name>`, without its indexes (whose names the
    /// new table's indexes take).
    private static func retire(_ table: String, _ connection: SQLiteConnection) throws -> String {
        let q = SQLBuilder.quote
        let statement = try connection.cachedStatement("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
        try statement.bind([.string(table)])
        var indexes: [String] = []
        while try statement.step() { indexes.append(statement.text(at: 0)) }
        for index in indexes { try connection.execute("DROP INDEX \(q(index))") }
        let retired = "_retired_\(table)"
        try connection.execute("ALTER TABLE \(q(table)) RENAME TO \(q(retired))")
        return retired
    }

    /// A row read for migration: attributes and to-one keys by name, plus its version and the raw
    /// order columns.
    private struct SourceRow {
        let row: MigrationRow
        let version: Int64
        let extra: [String: AttributeValue]
    }

    private static func readRows(_ entity: EntityDescription, table: String, extraColumns: Set<String>,
                                 layout: RelationshipLayout, _ connection: SQLiteConnection) throws -> [SourceRow] {
        let q = SQLBuilder.quote
        let extras = extraColumns.sorted()
        let columns = [SQLBuilder.primaryKeyColumn, SQLBuilder.versionColumn] + entity.attributes.map(\.name) + extras
        let statement = try connection.cachedStatement("SELECT \(columns.map(q).joined(separator: ", ")) FROM \(q(table))")
        defer { statement.reset() }
        var rows: [SourceRow] = []
        let foreignKeys = Set(entity.relationships.compactMap { relationship -> String? in
            if case .foreignKey(let column)? = layout.storage[entity.name]?[relationship.name] { return column }
            return nil
        })
        while try statement.step() {
            var values: [String: AttributeValue] = [:]
            for (index, attribute) in entity.attributes.enumerated() {
                guard let value = statement.value(at: Int32(index + 2), as: attribute.type) else {
                    throw undecodable(entity, attribute, primaryKey: statement.int64(at: 0))
                }
                values[attribute.name] = value
            }
            var extra: [String: AttributeValue] = [:]
            for (offset, column) in extras.enumerated() {
                let position = Int32(entity.attributes.count + 2 + offset)
                let value: AttributeValue = statement.isNull(at: position) ? .null : .int(statement.int64(at: position))
                if foreignKeys.contains(column) { values[column] = value } else { extra[column] = value }
            }
            rows.append(SourceRow(row: MigrationRow(primaryKey: statement.int64(at: 0), values: values),
                                  version: statement.int64(at: 1), extra: extra))
        }
        return rows
    }

    private static func copyRows(_ rows: [SourceRow], from old: EntityDescription, to entity: EntityDescription,
                                 extraColumns: Set<String>, layout: RelationshipLayout, step: MigrationStep?,
                                 number: Int, _ connection: SQLiteConnection) throws {
        let keptForeignKeys = entity.relationships.compactMap { relationship -> String? in
            if case .foreignKey(let column)? = layout.storage[entity.name]?[relationship.name] { return column }
            return nil
        }
        for source in rows {
            var destination = MigrationRow(primaryKey: source.row.primaryKey, values: [:])
            for attribute in entity.attributes {
                let oldName = step?.renamedAttributes["\(entity.name).\(attribute.name)"] ?? attribute.name
                let value = source.row.values[oldName] ?? .null
                destination.values[attribute.name] = value.fits(attribute.type) ? value : attribute.defaultValue
            }
            for column in keptForeignKeys { destination.values[column] = source.row.values[column] ?? .null }
            try step?.transformRow?(entity.name, source.row, &destination)
            try insert(destination, version: source.version, into: entity, extra: source.extra, extraColumns: extraColumns,
                       layout: layout, number: number, connection)
        }
    }

    /// Inserts a migrated row, checking every value against the new version's attribute.
    private static func insert(_ row: MigrationRow, version: Int64, into entity: EntityDescription, extra: [String: AttributeValue],
                               extraColumns: Set<String>, layout: RelationshipLayout, number: Int,
                               _ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote
        var values: [AttributeValue] = [.int(row.primaryKey), .int(version)]
        for attribute in entity.attributes {
            let value = row.values[attribute.name] ?? attribute.defaultValue
            guard value.fits(attribute.type), !value.isNaN else {
                throw SkerryError(.wrongValueType,
                                  "Step \(number): the value \(value) of '\(entity.name).\(attribute.name)' in row \(row.primaryKey) is not a \(attribute.type).",
                                  entityName: entity.name, key: attribute.name)
            }
            if value.isNull && !attribute.isOptional {
                throw SkerryError(.missingRequiredValue,
                                  "Step \(number): the required attribute '\(entity.name).\(attribute.name)' of row \(row.primaryKey) has no value.",
                                  entityName: entity.name, key: attribute.name)
            }
            values.append(value)
        }
        let extras = extraColumns.sorted()
        for column in extras { values.append(row.values[column] ?? extra[column] ?? .null) }
        let columns = [SQLBuilder.primaryKeyColumn, SQLBuilder.versionColumn] + entity.attributes.map(\.name) + extras
        try connection.cachedStatement("INSERT INTO \(q(entity.name)) (\(columns.map(q).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))")
            .run(values)
    }
}
