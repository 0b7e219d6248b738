import Foundation
import SkerryCore

extension PostgresStore {
    /// The format of Skerry's own tables; a store with another format is refused, not modified.
    static let formatVersion = "1"
    static let metadataTable = "_skerry_metadata"

    /// The sequence that gives `entity`'s rows their keys.
    static func sequenceName(_ entity: String) -> String { "_skerry_seq_\(entity)" }

    /// Creates the schema of a new store, or checks and migrates an existing one, in one
    /// transaction under an advisory lock on the store's schema: when several instances start at
    /// once, one creates or migrates and the others wait, then find the schema ready.
    /// Returns the store's identifier.
    static func prepareSchema(
        pool: PostgresConnectionPool, description: StoreDescription, options: PostgresStoreOptions,
        model: ObjectModel, entities: [EntityDescription]
    ) throws(SkerryError) -> String {
        do {
            return try pool.withConnection { connection in
                try connection.transaction {
                    let schemaName = try options.schema ?? connection.query("SELECT current_schema()").text(0, 0)
                    try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [.string("skerry:" + schemaName)])
                    if let schema = options.schema {
                        try connection.execute("CREATE SCHEMA IF NOT EXISTS \(SQLBuilder.quote(schema))")
                    }
                    let exists = try connection.query("SELECT to_regclass(?) IS NOT NULL", [.string(SQLBuilder.quote(metadataTable))])
                    if exists.value(0, 0, as: .boolean) == .bool(true) {
                        return try migrateIfNeeded(connection, description: description, model: model, entities: entities)
                    }
                    return try createSchema(connection, model: model, entities: entities)
                }
            }
        } catch let error as SkerryError {
            throw error
        } catch let error as PostgresError {
            throw loadError(error, description)
        } catch {
            throw SkerryError(.storeLoadFailed, "Cannot load \(description): \(error)")
        }
    }

    private static func createSchema(
        _ connection: PostgresConnection, model: ObjectModel,
        entities: [EntityDescription]
    ) throws -> String {
        let q = SQLBuilder.quote
        try connection.execute("CREATE TABLE \(q(metadataTable)) (\"key\" text PRIMARY KEY, \"value\" text NOT NULL)")
        let layout = RelationshipLayout(entities: entities)
        for entity in entities {
            try createTable(entity, extraColumns: layout.extraColumns[entity.name] ?? [], connection)
        }
        for table in layout.joinTables.sorted() {
            try createJoinTable(table, connection)
        }
        try createFunctions(connection)
        try createChangesTable(connection)
        let identifier = UUID().uuidString
        try writeMetadata(["formatVersion": formatVersion, "storeIdentifier": identifier], connection)
        try writeModelMetadata(model: model, entities: entities, connection)
        return identifier
    }

    /// Creates an entity's table (key, version, attributes in their native types, relationship
    /// columns), its key sequence and its indexes.
    static func createTable(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        var columns = [
            "\(q(SQLBuilder.primaryKeyColumn)) bigint PRIMARY KEY",
            "\(q(SQLBuilder.versionColumn)) bigint NOT NULL DEFAULT 1",
        ]
        columns += entity.storedAttributes.map { "\(q($0.name)) \(columnType($0.type))" }
        columns += extraColumns.sorted().map { "\(q($0)) bigint" }
        try connection.execute("CREATE TABLE \(q(entity.name)) (\(columns.joined(separator: ", ")))")
        try connection.execute("CREATE SEQUENCE IF NOT EXISTS \(q(sequenceName(entity.name)))")
        for index in StoreIndexes.wanted(entity, extraColumns: extraColumns) {
            try connection.execute(index.sql)
        }
    }

    /// Creates the join table of a to-many relationship pair.
    static func createJoinTable(_ table: String, _ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        try connection.execute(
            """
            CREATE TABLE \(q(table)) ("source" bigint NOT NULL, "target" bigint NOT NULL, \
            "source_order" bigint, "target_order" bigint, PRIMARY KEY ("source", "target"))
            """)
        try connection.execute("CREATE INDEX \(q(table + "__target")) ON \(q(table)) (\"target\")")
    }

    /// The native PostgreSQL type of an attribute type's column. Columns are nullable: required
    /// values are checked by the context before any SQL runs. `float` attributes are `double
    /// precision` like `double` ones: a context holds a float's value as a Double, and `real`
    /// would round a value the context still holds unrounded.
    static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .boolean: return "boolean"
        case .integer16: return "smallint"
        case .integer32: return "integer"
        case .integer64: return "bigint"
        case .float, .double: return "double precision"
        case .decimal: return "numeric"
        case .date: return "timestamptz"
        case .string, .url: return "text"
        case .binary: return "bytea"
        case .uuid: return "uuid"
        }
    }

    private static func writeMetadata(_ values: [String: String], _ connection: PostgresConnection) throws {
        let sql =
            "INSERT INTO \(SQLBuilder.quote(metadataTable)) (\"key\", \"value\") VALUES (?, ?) "
            + "ON CONFLICT (\"key\") DO UPDATE SET \"value\" = excluded.\"value\""
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try connection.query(sql, [.string(key), .string(value)])
        }
    }

    static func writeModelMetadata(model: ObjectModel, entities: [EntityDescription], _ connection: PostgresConnection) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let schema = String(decoding: try encoder.encode(StoredSchema(entities: entities)), as: UTF8.self)
        try writeMetadata(["modelVersionHash": model.versionHash, "schema": schema], connection)
    }

    static func readMetadata(_ connection: PostgresConnection) throws -> [String: String] {
        let result = try connection.query("SELECT \"key\", \"value\" FROM \(SQLBuilder.quote(metadataTable))")
        var values: [String: String] = [:]
        for row in 0..<result.rowCount { values[result.text(row, 0)] = result.text(row, 1) }
        return values
    }

    /// Brings an existing store to `entities`: nothing when the schema is the same; additive
    /// changes (new entities, optional attributes or attributes with a default, relationships
    /// that add columns or join tables, indexes) in place; anything else fails.
    private static func migrateIfNeeded(
        _ connection: PostgresConnection, description: StoreDescription,
        model: ObjectModel, entities: [EntityDescription]
    ) throws -> String {
        try createFunctions(connection) // this version's definitions
        try createChangesTable(connection) // stores created before change propagation lack it
        let metadata = try readMetadata(connection)
        // An unreadable schema text is the same failure as a missing one, reported below.
        guard let identifier = metadata["storeIdentifier"], let schemaText = metadata["schema"],
            let stored = try? JSONDecoder().decode(StoredSchema.self, from: Data(schemaText.utf8))
        else {
            throw SkerryError(.storeLoadFailed, "The metadata of \(description) is incomplete or unreadable; the store was left untouched.")
        }
        guard metadata["formatVersion"] == formatVersion else {
            throw SkerryError(
                .storeLoadFailed,
                "\(description) has storage format \(metadata["formatVersion"] ?? "?"), which this version of Skerry does not read (it reads format \(formatVersion))."
            )
        }
        // A plan's custom steps (row transforms, finish closures, renames) are not run by this
        // store: refused rather than skipped, so that no step the user wrote is silently left out.
        if let plan = description.migrationPlan, let hash = metadata["modelVersionHash"], hash != model.versionHash,
            let version = plan.versions.firstIndex(where: { $0.versionHash == hash }),
            let step = plan.steps.values.filter({ $0.from >= version }).min(by: { $0.from < $1.from })
        {
            throw SkerryError(
                .modelMismatch,
                "\(description) was written with version \(version) of its MigrationPlan, and the plan has a custom step from version \(step.from); PostgreSQL stores migrate additive changes by themselves but do not run MigrationPlan steps. The store was left untouched."
            )
        }
        let current = StoredSchema(entities: entities)
        if stored.shape == current.shape {
            if metadata["modelVersionHash"] != model.versionHash || stored != current {
                try writeModelMetadata(model: model, entities: entities, connection)
            }
            return identifier
        }
        let migration = SchemaMigration(from: stored, to: entities)
        if !migration.incompatibilities.isEmpty {
            throw SkerryError(
                .modelMismatch,
                "\(description) was written with a model that cannot be migrated automatically to this one: "
                    + migration.incompatibilities.joined(separator: "; ")
                    + ". PostgreSQL stores migrate additive changes by themselves; the store was left untouched.")
        }
        let oldLayout = RelationshipLayout(schema: stored), newLayout = RelationshipLayout(entities: entities)
        if !description.shouldMigrateAutomatically && (!migration.isEmpty || oldLayout.storage != newLayout.storage) {
            throw SkerryError(
                .modelMismatch, "\(description) needs a migration (automatic migration is off). The store was left untouched.")
        }
        let q = SQLBuilder.quote
        let newEntityNames = Set(migration.newEntities.map(\.name))
        for entity in migration.newEntities {
            try createTable(entity, extraColumns: newLayout.extraColumns[entity.name] ?? [], connection)
        }
        for (table, columns) in newLayout.extraColumns.sorted(by: { $0.key < $1.key }) where !newEntityNames.contains(table) {
            for column in columns.subtracting(oldLayout.extraColumns[table] ?? []).sorted() {
                try connection.execute("ALTER TABLE \(q(table)) ADD COLUMN \(q(column)) bigint")
            }
        }
        for table in newLayout.joinTables.subtracting(oldLayout.joinTables).sorted() {
            try createJoinTable(table, connection)
        }
        for (entity, attribute) in migration.newAttributes {
            try connection.execute("ALTER TABLE \(q(entity.name)) ADD COLUMN \(q(attribute.name)) \(columnType(attribute.type))")
            if !attribute.defaultValue.isNull {
                try connection.query("UPDATE \(q(entity.name)) SET \(q(attribute.name)) = ?", [attribute.defaultValue])
            }
        }
        for entity in entities where !newEntityNames.contains(entity.name) {
            try syncIndexes(entity, extraColumns: newLayout.extraColumns[entity.name] ?? [], connection)
        }
        try writeModelMetadata(model: model, entities: entities, connection)
        return identifier
    }

    /// Makes `entity`'s Skerry indexes the wanted ones: drops those no longer wanted, creates new ones.
    private static func syncIndexes(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: PostgresConnection) throws {
        let wanted = StoreIndexes.wanted(entity, extraColumns: extraColumns)
        let existing = try connection.query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ?",
            [.string(entity.name)])
        let names = Set((0..<existing.rowCount).map { existing.text($0, 0) })
        let wantedNames = Set(wanted.map(\.name))
        for name in names.sorted()
        where !wantedNames.contains(name)
            && (name.hasPrefix("\(entity.name)__index__") || name.hasPrefix("\(entity.name)__unique__"))
        {
            try connection.execute("DROP INDEX \(SQLBuilder.quote(name))")
        }
        for index in wanted where !names.contains(index.name) {
            try connection.execute(index.sql)
        }
    }
}
