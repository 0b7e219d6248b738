import Foundation

extension SQLiteStore {
    /// The format of Skerry's own tables; a store with a newer format is refused, not modified.
    static let formatVersion = "1"
    static let metadataTable = "_skerry_metadata"
    /// The next primary key of each entity: keys are never reused, even after the row with the
    /// highest key is deleted (which `INTEGER PRIMARY KEY` alone would do), without paying for
    /// `AUTOINCREMENT`'s update of `sqlite_sequence` on every row.
    static let keysTable = "_skerry_keys"

    /// Creates the schema of a new store, or checks and migrates the schema of an existing one, in
    /// one write transaction. Returns the store's identifier, what the load did, and the model
    /// version hash the store recorded before (nil for a new store).
    static func prepareSchema(
        pool: ConnectionPool, description: StoreDescription, model: ObjectModel,
        entities: [EntityDescription]
    ) throws(SkerryError)
        -> (identifier: String, outcome: StoreLoadEvent.Outcome, previousVersionHash: String?)
    {
        do {
            return try pool.write { connection in
                try connection.writeTransaction {
                    if try tableExists(metadataTable, connection) {
                        let previous = try readMetadata(connection)["modelVersionHash"]
                        let identifier = try migrateIfNeeded(connection, description: description, model: model, entities: entities)
                        return (identifier, previous == model.versionHash ? .opened : .migrated, previous)
                    }
                    return (try createSchema(connection, description: description, model: model, entities: entities), .created, nil)
                }
            }
        } catch let error as SkerryError {
            throw error
        } catch let error as SQLiteError {
            throw SkerryError(.storeLoadFailed, "Cannot load \(description): \(error.message)", sqlite: error)
        } catch {
            throw SkerryError(.storeLoadFailed, "Cannot load \(description): \(error)")
        }
    }

    private static func tableExists(_ name: String, _ connection: SQLiteConnection) throws -> Bool {
        try connection.scalarInt64("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.string(name)]) ?? 0 > 0
    }

    private static func createSchema(
        _ connection: SQLiteConnection, description: StoreDescription,
        model: ObjectModel, entities: [EntityDescription]
    ) throws -> String {
        if try connection.scalarInt64("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") ?? 0 > 0 {
            throw SkerryError(
                .storeLoadFailed,
                "\(description) is a SQLite database that Skerry did not create (it has no \(metadataTable) table); it was left untouched.")
        }
        try connection.execute(
            "CREATE TABLE \(SQLBuilder.quote(metadataTable)) (\"key\" TEXT PRIMARY KEY NOT NULL, \"value\" TEXT NOT NULL)")
        try connection.execute(
            "CREATE TABLE \(SQLBuilder.quote(keysTable)) (\"entity\" TEXT PRIMARY KEY NOT NULL, \"next\" INTEGER NOT NULL)")
        let layout = RelationshipLayout(entities: entities)
        for entity in entities {
            try createTable(entity, extraColumns: layout.extraColumns[entity.name] ?? [], connection)
        }
        for table in layout.joinTables.sorted() {
            try createJoinTable(table, connection)
        }
        try syncFamilyUniqueness(entities, connection)
        let identifier = UUID().uuidString
        try writeMetadata(["formatVersion": formatVersion, "storeIdentifier": identifier], connection)
        try writeModelMetadata(model: model, entities: entities, connection)
        return identifier
    }

    /// Creates an entity's table: key, version, attributes, and the relationship columns the
    /// layout puts in it (foreign keys, indexed, and order columns).
    static func createTable(
        _ entity: EntityDescription, extraColumns: Set<String>,
        _ connection: SQLiteConnection
    ) throws {
        try createTableColumns(entity, named: entity.name, extraColumns: extraColumns, connection)
        try createIndexes(entity, extraColumns: extraColumns, connection)
    }

    /// Creates the table of `entity` under `name`, without its indexes.
    static func createTableColumns(
        _ entity: EntityDescription, named name: String, extraColumns: Set<String>,
        _ connection: SQLiteConnection
    ) throws {
        let q = SQLBuilder.quote
        var columns = [
            "\(q(SQLBuilder.primaryKeyColumn)) INTEGER PRIMARY KEY",
            "\(q(SQLBuilder.versionColumn)) INTEGER NOT NULL DEFAULT 1",
        ]
        columns += entity.storedAttributes.map { "\(q($0.name)) \(columnType($0.type))" }
        columns += extraColumns.sorted().map { "\(q($0)) INTEGER" }
        try connection.execute("CREATE TABLE \(q(name)) (\(columns.joined(separator: ", ")))")
    }

    /// Creates the indexes of `entity`'s table: foreign keys, uniqueness constraints, indexes.
    static func createIndexes(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: SQLiteConnection) throws {
        for index in wantedIndexes(entity, extraColumns: extraColumns) {
            try connection.execute(index.sql)
        }
    }

    /// Brings the indexes of an existing table to those `entity` wants: drops Skerry's indexes it
    /// no longer wants and creates the missing ones (a store migrating additively).
    static func syncIndexes(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: SQLiteConnection) throws {
        let wanted = wantedIndexes(entity, extraColumns: extraColumns)
        let statement = try connection.cachedStatement(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL")
        try statement.bind([.string(entity.name)])
        var existing: [String] = []
        while try statement.step() { existing.append(statement.text(at: 0)) }
        statement.reset()
        let wantedNames = Set(wanted.map(\.name))
        for name in existing
        where !wantedNames.contains(name)
            && (name.hasPrefix("\(entity.name)__index__") || name.hasPrefix("\(entity.name)__unique__"))
        {
            try connection.execute("DROP INDEX \(SQLBuilder.quote(name))")
        }
        for index in wanted where !existing.contains(index.name) {
            try connection.execute(index.sql)
        }
    }

    typealias TableIndex = StoreIndexes.TableIndex

    static func wantedIndexes(_ entity: EntityDescription, extraColumns: Set<String>) -> [TableIndex] {
        StoreIndexes.wanted(entity, extraColumns: extraColumns)
    }

    /// Creates the join table of a to-many relationship pair.
    static func createJoinTable(_ table: String, _ connection: SQLiteConnection) throws {
        let q = SQLBuilder.quote
        try connection.execute(
            """
            CREATE TABLE \(q(table)) ("source" INTEGER NOT NULL, "target" INTEGER NOT NULL, \
            "source_order" INTEGER, "target_order" INTEGER, PRIMARY KEY ("source", "target")) WITHOUT ROWID
            """)
        try connection.execute("CREATE INDEX \(q(table + "__target")) ON \(q(table)) (\"target\")")
    }

    /// The column type, which sets SQLite's type affinity for the attribute's storage form.
    /// Columns are nullable: required values are checked by the context before any SQL runs.
    static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .boolean, .integer16, .integer32, .integer64: return "INTEGER"
        case .float, .double, .date: return "REAL"
        case .decimal, .string, .url: return "TEXT"
        case .binary, .uuid: return "BLOB"
        }
    }

    private static func writeMetadata(_ values: [String: String], _ connection: SQLiteConnection) throws {
        let statement = try connection.cachedStatement(
            "INSERT OR REPLACE INTO \(SQLBuilder.quote(metadataTable)) (\"key\", \"value\") VALUES (?, ?)")
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try statement.run([.string(key), .string(value)])
        }
    }

    static func writeModelMetadata(model: ObjectModel, entities: [EntityDescription], _ connection: SQLiteConnection) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let schema = String(decoding: try encoder.encode(StoredSchema(entities: entities)), as: UTF8.self)
        try writeMetadata(["modelVersionHash": model.versionHash, "schema": schema], connection)
    }

    static func readMetadata(_ connection: SQLiteConnection) throws -> [String: String] {
        let statement = try connection.cachedStatement("SELECT \"key\", \"value\" FROM \(SQLBuilder.quote(metadataTable))")
        var values: [String: String] = [:]
        while try statement.step() { values[statement.text(at: 0)] = statement.text(at: 1) }
        return values
    }

    private static func migrateIfNeeded(
        _ connection: SQLiteConnection, description: StoreDescription,
        model: ObjectModel, entities: [EntityDescription]
    ) throws -> String {
        let metadata = try readMetadata(connection)
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
        let current = StoredSchema(entities: entities)
        if stored.shape == current.shape {
            // Stores written before uniqueness held across hierarchies get their triggers here.
            try syncFamilyUniqueness(entities, connection)
            if metadata["modelVersionHash"] != model.versionHash || stored != current {
                try writeModelMetadata(model: model, entities: entities, connection)
            }
            return identifier
        }
        let migration = SchemaMigration(from: stored, to: entities)
        if !migration.incompatibilities.isEmpty || !migration.changedHierarchies.isEmpty {
            throw SkerryError(
                .modelMismatch,
                "\(description) was written with a model that cannot be migrated automatically to this one: "
                    + (migration.incompatibilities + migration.changedHierarchies).joined(separator: "; ")
                    + ". The store was left untouched.")
        }
        let layoutChanged = RelationshipLayout(schema: stored).storage != RelationshipLayout(entities: entities).storage
        if !description.shouldMigrateAutomatically && (!migration.isEmpty || layoutChanged) {
            throw SkerryError(
                .modelMismatch, "\(description) needs a migration (automatic migration is off). The store was left untouched.")
        }
        let oldLayout = RelationshipLayout(schema: stored), newLayout = RelationshipLayout(entities: entities)
        let newEntityNames = Set(migration.newEntities.map(\.name))
        for entity in migration.newEntities {
            try createTable(entity, extraColumns: newLayout.extraColumns[entity.name] ?? [], connection)
        }
        let q = SQLBuilder.quote
        for (table, columns) in newLayout.extraColumns.sorted(by: { $0.key < $1.key }) where !newEntityNames.contains(table) {
            for column in columns.subtracting(oldLayout.extraColumns[table] ?? []).sorted() {
                try connection.execute("ALTER TABLE \(q(table)) ADD COLUMN \(q(column)) INTEGER")
            }
        }
        for table in newLayout.joinTables.subtracting(oldLayout.joinTables).sorted() {
            try createJoinTable(table, connection)
        }
        for (entity, attribute) in migration.newAttributes {
            try connection.execute("ALTER TABLE \(q(entity.name)) ADD COLUMN \(q(attribute.name)) \(columnType(attribute.type))")
            if !attribute.defaultValue.isNull {
                try connection.cachedStatement("UPDATE \(q(entity.name)) SET \(q(attribute.name)) = ?").run([attribute.defaultValue])
            }
        }
        for entity in entities where !newEntityNames.contains(entity.name) {
            try syncIndexes(entity, extraColumns: newLayout.extraColumns[entity.name] ?? [], connection)
        }
        try syncFamilyUniqueness(entities, connection)
        try writeModelMetadata(model: model, entities: entities, connection)
        return identifier
    }
}

/// The indexes of an entity's table, the same for every store of this package (the SQL is
/// common to SQLite and PostgreSQL).
package enum StoreIndexes {
    /// One index of a table, as created.
    package struct TableIndex {
        package let name: String
        package let sql: String
    }

    /// The indexes `entity`'s table gets, each column list once: a single-column index on each
    /// foreign-key column, a unique index per uniqueness constraint, and an index per fetch index
    /// (a to-one relationship's name stands for its foreign-key column; one kept in the other
    /// table of a one-to-one pair is left out). Two fetch indexes over the same columns (in
    /// another order or under another name in Xcode) give one index, and an index that a unique
    /// index or a foreign-key index already covers exactly is not made again.
    package static func wanted(_ entity: EntityDescription, extraColumns: Set<String>) -> [TableIndex] {
        let q = SQLBuilder.quote
        var seen = Set<[String]>()
        var result: [TableIndex] = []
        func add(_ columns: [String], unique: Bool) {
            guard !columns.isEmpty, seen.insert(columns).inserted || unique else { return }
            let name = indexName(entity.name, columns, unique: unique)
            guard !result.contains(where: { $0.name == name }) else { return }
            result.append(
                TableIndex(
                    name: name,
                    sql:
                        "CREATE \(unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(q(name)) ON \(q(entity.name)) (\(columns.map(q).joined(separator: ", ")))"
                ))
        }
        for constraint in entity.uniquenessConstraints { add(constraint, unique: true) }
        for column in extraColumns.sorted() where !column.hasPrefix("_") { add([column], unique: false) }
        for index in entity.indexes {
            var columns: [String] = []
            for name in index.attributeNames where entity.attribute(named: name).map({ !$0.isTransient }) ?? extraColumns.contains(name) {
                if !columns.contains(name) { columns.append(name) }
            }
            add(columns, unique: false)
        }
        return result
    }

    /// The index's name: the entity, the kind, and a hash of the attribute list joined with a
    /// comma (which names cannot contain), so that different lists never share a name.
    package static func indexName(_ entityName: String, _ attributes: [String], unique: Bool) -> String {
        "\(entityName)__\(unique ? "unique" : "index")__\(ObjectModel.fnv1a64Hex(attributes.joined(separator: ",")))"
    }

}
