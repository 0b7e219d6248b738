import CSQLite
import Foundation

extension SQLiteStore {
    /// The format of Skerry's own tables; a store with a newer format is refused, not modified.
    static let formatVersion = StoreSchema.formatVersion
    static let metadataTable = StoreSchema.metadataTable
    /// The next primary key of each entity: keys are never reused, even after the row with the
    /// highest key is deleted (which `INTEGER PRIMARY KEY` alone would do), without paying for
    /// `AUTOINCREMENT`'s update of `sqlite_sequence` on every row.
    static let keysTable = "_skerry_keys"
    /// The schema in SQLite's dialect.
    static let schema = StoreSchema(dialect: .sqlite)

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
                    if try connection.tableExists(metadataTable) {
                        let recorded = try schema.recorded(connection, description)
                        let previous = recorded.metadata["modelVersionHash"]
                        // Stores written before a relationship with a transient inverse was stored lack its table or column.
                        try schema.addMissingRelationshipStorage(
                            recorded.schema, entities: recorded.schema.shape == StoredSchema(entities: entities).shape ? entities : nil,
                            connection)
                        // Stores written before uniqueness held across hierarchies get their triggers here.
                        try schema.migrateInPlace(connection, recorded, description: description, model: model, entities: entities) {
                            try syncFamilyUniqueness(entities, connection)
                        }
                        return (recorded.identifier, previous == model.versionHash ? .opened : .migrated, previous)
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

    private static func createSchema(
        _ connection: SQLiteConnection, description: StoreDescription,
        model: ObjectModel, entities: [EntityDescription]
    ) throws -> String {
        if try connection.scalarInt64("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") ?? 0 > 0 {
            throw SkerryError(
                .storeLoadFailed,
                "\(description) is a SQLite database that Skerry did not create (it has no \(metadataTable) table); it was left untouched.")
        }
        return try schema.create(model: model, entities: entities, connection) {
            try connection.execute(
                "CREATE TABLE \(SQLBuilder.quote(keysTable)) (\"entity\" TEXT PRIMARY KEY NOT NULL, \"next\" INTEGER NOT NULL)")
            try syncFamilyUniqueness(entities, connection)
        }
    }

    /// Creates the table of `entity` under `name`, without its indexes (``StoreSchema``).
    static func createTableColumns(
        _ entity: EntityDescription, named name: String, extraColumns: Set<String>,
        _ connection: SQLiteConnection
    ) throws {
        try schema.createTableColumns(entity, named: name, extraColumns: extraColumns, connection)
    }

    /// Creates the indexes of `entity`'s table (``StoreSchema``).
    static func createIndexes(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: SQLiteConnection) throws {
        try schema.createIndexes(entity, extraColumns: extraColumns, connection)
    }

    /// Creates the join table of a to-many relationship pair (``StoreSchema``).
    static func createJoinTable(_ table: String, _ connection: SQLiteConnection) throws {
        try schema.createJoinTable(table, connection)
    }

    /// The column type, which sets SQLite's type affinity for the attribute's storage form.
    static func columnType(_ type: AttributeType) -> String { SQLDialect.sqlite.columnType(type) }

    static func writeModelMetadata(model: ObjectModel, entities: [EntityDescription], _ connection: SQLiteConnection) throws {
        try schema.writeModelMetadata(model: model, entities: entities, connection)
    }

    static func readMetadata(_ connection: SQLiteConnection) throws -> [String: String] {
        try schema.readMetadata(connection)
    }
}

extension SQLiteConnection: StoreSQLConnection {
    func run(_ sql: String, _ values: [AttributeValue]) throws {
        try cachedStatement(sql).run(values)
    }

    func textRows(_ sql: String, _ values: [AttributeValue]) throws -> [[String]] {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [[String]] = []
        while try statement.step() {
            rows.append((0..<sqlite3_column_count(statement.handle)).map { statement.isNull(at: $0) ? "" : statement.text(at: $0) })
        }
        return rows
    }

    func valueRows(_ sql: String, _ values: [AttributeValue], types: [AttributeType]) throws -> [[AttributeValue?]] {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [[AttributeValue?]] = []
        while try statement.step() {
            rows.append(types.indices.map { statement.value(at: Int32($0), as: types[$0]) })
        }
        return rows
    }
}
