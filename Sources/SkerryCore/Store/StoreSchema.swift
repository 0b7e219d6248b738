import Foundation

/// What the schema code needs of a database connection; the SQLite and PostgreSQL connections
/// both provide it. Statements use `?` for their parameters in both.
package protocol StoreSQLConnection: AnyObject {
    /// Runs SQL without parameters (DDL).
    func execute(_ sql: String) throws
    /// Runs one statement with `values` bound, ignoring any rows it returns.
    func run(_ sql: String, _ values: [AttributeValue]) throws
    /// The rows of a query whose columns are all text (or NULL, read as "").
    func textRows(_ sql: String, _ values: [AttributeValue]) throws -> [[String]]
    /// The rows of a query, column `i` read as a value of an attribute of type `types[i]` as the
    /// store reads an object's row (NULL as `.null`); nil for a cell that holds no such value.
    func valueRows(_ sql: String, _ values: [AttributeValue], types: [AttributeType]) throws -> [[AttributeValue?]]
    /// Runs a query that returns one integer; nil when it returns no row or NULL.
    func scalarInt64(_ sql: String, _ values: [AttributeValue]) throws -> Int64?
}

/// A store's schema as both stores of this package lay it out, in a dialect: one table per
/// entity (key, version, attributes, relationship columns), join tables, Skerry's indexes, and
/// the metadata table that records the store's identifier, format and model. Creating it,
/// reading what a store recorded, and migrating additively in place are the same steps in both
/// stores; what each store adds (SQLite's key table and hierarchy triggers, PostgreSQL's key
/// sequences, functions and change table) it does around these steps.
package struct StoreSchema: Sendable {
    /// The format of Skerry's own tables; a store with another format is refused, not modified.
    package static let formatVersion = "1"
    package static let metadataTable = "_skerry_metadata"

    package let dialect: SQLDialect

    package init(dialect: SQLDialect) {
        self.dialect = dialect
    }

    /// Refuses `entities` (a store's) when one of them has a relationship to an entity the store
    /// does not hold.
    /// - Throws: ``SkerryError/Code/storeLoadFailed`` naming the entity and relationship.
    package static func checkDestinationsHeld(_ entities: [EntityDescription], _ description: StoreDescription) throws(SkerryError) {
        let held = Set(entities.map(\.name))
        for entity in entities {
            for relationship in entity.relationships where !held.contains(relationship.destinationEntityName) {
                throw SkerryError(
                    .storeLoadFailed,
                    "\(description) holds '\(entity.name)' but not '\(relationship.destinationEntityName)', the destination of its relationship '\(relationship.name)'; related entities must share a store.",
                    entityName: entity.name, key: relationship.name)
            }
        }
    }

    // MARK: Creating

    /// Creates the schema of a new store: the metadata table, each entity's table with its
    /// indexes, the join tables; then runs `extras` (the store's own tables); then records a new
    /// store identifier, the format and the model. Returns the identifier.
    package func create(
        model: ObjectModel, entities: [EntityDescription], _ connection: some StoreSQLConnection,
        extras: () throws -> Void
    ) throws -> String {
        let q = SQLBuilder.quote
        try connection.execute(
            "CREATE TABLE \(q(Self.metadataTable)) (\"key\" \(dialect.textType) PRIMARY KEY NOT NULL, \"value\" \(dialect.textType) NOT NULL)"
        )
        let layout = RelationshipLayout(entities: entities)
        for entity in entities {
            try createTable(entity, extraColumns: layout.extraColumns[entity.name] ?? [], connection)
        }
        for table in layout.joinTables.sorted() {
            try createJoinTable(table, connection)
        }
        try extras()
        let identifier = UUID().uuidString
        try writeMetadata(["formatVersion": Self.formatVersion, "storeIdentifier": identifier], connection)
        try writeModelMetadata(model: model, entities: entities, connection)
        return identifier
    }

    /// Creates an entity's table: key, version, attributes, and the relationship columns the
    /// layout puts in it (foreign keys, indexed, and order columns); then its indexes.
    package func createTable(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: some StoreSQLConnection) throws {
        try createTableColumns(entity, named: entity.name, extraColumns: extraColumns, connection)
        try createIndexes(entity, extraColumns: extraColumns, connection)
    }

    /// Creates the table of `entity` under `name`, without its indexes.
    package func createTableColumns(
        _ entity: EntityDescription, named name: String, extraColumns: Set<String>,
        _ connection: some StoreSQLConnection
    ) throws {
        let q = SQLBuilder.quote
        var columns = [
            "\(q(SQLBuilder.primaryKeyColumn)) \(dialect.keyType) PRIMARY KEY",
            "\(q(SQLBuilder.versionColumn)) \(dialect.keyType) NOT NULL DEFAULT 1",
        ]
        columns += entity.storedAttributes.map { "\(q($0.name)) \(dialect.columnType($0.type))" }
        columns += extraColumns.sorted().map { "\(q($0)) \(dialect.keyType)" }
        try connection.execute("CREATE TABLE \(q(name)) (\(columns.joined(separator: ", ")))")
    }

    /// Creates the indexes of `entity`'s table: foreign keys, uniqueness constraints, indexes.
    package func createIndexes(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: some StoreSQLConnection) throws {
        for index in StoreIndexes.wanted(entity, extraColumns: extraColumns) {
            try connection.execute(index.sql)
        }
    }

    /// Brings the indexes of an existing table to those `entity` wants: drops Skerry's indexes it
    /// no longer wants and creates the missing ones (a store migrating additively).
    package func syncIndexes(_ entity: EntityDescription, extraColumns: Set<String>, _ connection: some StoreSQLConnection) throws {
        let wanted = StoreIndexes.wanted(entity, extraColumns: extraColumns)
        let table = dialect == .postgres ? StoreIndexes.storedName(entity.name) : entity.name
        let existing = Set(try connection.textRows(dialect.indexNamesOfTable, [.string(table)]).map { $0[0] })
        let wantedNames = Set(wanted.map(\.name))
        for name in existing.sorted() where !wantedNames.contains(name) && StoreIndexes.isSkerryIndex(name, of: entity.name) {
            try connection.execute("DROP INDEX \(SQLBuilder.quote(name))")
        }
        for index in wanted where !existing.contains(index.name) {
            try connection.execute(index.sql)
        }
    }

    /// Creates the join table of a to-many relationship pair.
    package func createJoinTable(_ table: String, _ connection: some StoreSQLConnection) throws {
        let q = SQLBuilder.quote, key = dialect.keyType
        try connection.execute(
            """
            CREATE TABLE \(q(table)) ("source" \(key) NOT NULL, "target" \(key) NOT NULL, \
            "source_order" \(key), "target_order" \(key), PRIMARY KEY ("source", "target"))\(dialect.joinTableOptions)
            """)
        try connection.execute("CREATE INDEX \(q(StoreIndexes.fittingName(table + "__target"))) ON \(q(table)) (\"target\")")
    }

    // MARK: Metadata

    package func writeMetadata(_ values: [String: String], _ connection: some StoreSQLConnection) throws {
        let sql = dialect.replacingInsert(
            into: Self.metadataTable, columns: ["key", "value"], conflictColumns: ["key"], updatedColumns: ["value"])
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try connection.run(sql, [.string(key), .string(value)])
        }
    }

    /// Records the model's version hash and the schema of `entities` (what a later load compares).
    package func writeModelMetadata(model: ObjectModel, entities: [EntityDescription], _ connection: some StoreSQLConnection) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let schema = String(decoding: try encoder.encode(StoredSchema(entities: entities)), as: UTF8.self)
        try writeMetadata(["modelVersionHash": model.versionHash, "schema": schema], connection)
    }

    package func readMetadata(_ connection: some StoreSQLConnection) throws -> [String: String] {
        var values: [String: String] = [:]
        for row in try connection.textRows("SELECT \"key\", \"value\" FROM \(SQLBuilder.quote(Self.metadataTable))", []) {
            values[row[0]] = row[1]
        }
        return values
    }

    /// What an existing store recorded: its identifier, the schema it was written with, and all
    /// its metadata.
    package struct Recorded {
        package let identifier: String
        package let schema: StoredSchema
        package let metadata: [String: String]

        /// The same store, at `schema` (after migration steps that recorded it).
        package func reaching(_ schema: StoredSchema) -> Recorded {
            Recorded(identifier: identifier, schema: schema, metadata: metadata)
        }
    }

    /// Reads and checks what an existing store recorded.
    /// - Throws: ``SkerryError/Code/storeLoadFailed`` when the metadata is incomplete or
    ///   unreadable, or the store has another storage format.
    package func recorded(_ connection: some StoreSQLConnection, _ description: StoreDescription) throws -> Recorded {
        let metadata = try readMetadata(connection)
        // An unreadable schema text is the same failure as a missing one.
        guard let identifier = metadata["storeIdentifier"], let schemaText = metadata["schema"],
            let stored = try? JSONDecoder().decode(StoredSchema.self, from: Data(schemaText.utf8))
        else {
            throw SkerryError(.storeLoadFailed, "The metadata of \(description) is incomplete or unreadable; the store was left untouched.")
        }
        guard metadata["formatVersion"] == Self.formatVersion else {
            throw SkerryError(
                .storeLoadFailed,
                "\(description) has storage format \(metadata["formatVersion"] ?? "?"), which this version of Skerry does not read (it reads format \(Self.formatVersion))."
            )
        }
        return Recorded(identifier: identifier, schema: stored, metadata: metadata)
    }

    // MARK: Migrating in place

    /// Brings an existing store to `entities` in place: nothing when the schema has the same
    /// shape; additive changes (new entities, optional attributes or attributes with a default,
    /// relationships that add columns or join tables, indexes) otherwise; `finish` runs last, before
    /// the model is recorded (the store's own objects that follow the schema).
    /// - Throws: ``SkerryError/Code/modelMismatch`` for a change that is not additive (with
    ///   `note` after the list of reasons), for a hierarchy that changed, or when automatic
    ///   migration is off and the schema changed.
    package func migrateInPlace(
        _ connection: some StoreSQLConnection, _ recorded: Recorded, description: StoreDescription,
        model: ObjectModel, entities: [EntityDescription], note: String = "",
        finish: () throws -> Void
    ) throws {
        let stored = recorded.schema
        let current = StoredSchema(entities: entities)
        if stored.shape == current.shape {
            try finish()
            if recorded.metadata["modelVersionHash"] != model.versionHash || stored != current {
                try writeModelMetadata(model: model, entities: entities, connection)
            }
            return
        }
        let migration = SchemaMigration(from: stored, to: entities)
        if !migration.incompatibilities.isEmpty || !migration.changedHierarchies.isEmpty {
            throw SkerryError(
                .modelMismatch,
                "\(description) was written with a model that cannot be migrated automatically to this one: "
                    + (migration.incompatibilities + migration.changedHierarchies).joined(separator: "; ")
                    + ".\(note) The store was left untouched.")
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
                try connection.execute("ALTER TABLE \(q(table)) ADD COLUMN \(q(column)) \(dialect.keyType)")
            }
        }
        for table in newLayout.joinTables.subtracting(oldLayout.joinTables).sorted() {
            try createJoinTable(table, connection)
        }
        for (entity, attribute) in migration.newAttributes {
            try connection.execute(
                "ALTER TABLE \(q(entity.name)) ADD COLUMN \(q(attribute.name)) \(dialect.columnType(attribute.type))")
            if !attribute.defaultValue.isNull {
                try connection.run("UPDATE \(q(entity.name)) SET \(q(attribute.name)) = ?", [attribute.defaultValue])
            }
        }
        // A new derived attribute gets its value in every existing row, as a save would give it.
        try fillDerivedAttributes(
            migration.newAttributes.filter { $0.attribute.derivation != nil }, entities: entities, number: nil, connection)
        for entity in entities where !newEntityNames.contains(entity.name) {
            try syncIndexes(entity, extraColumns: newLayout.extraColumns[entity.name] ?? [], connection)
        }
        try finish()
        try writeModelMetadata(model: model, entities: entities, connection)
    }
}
