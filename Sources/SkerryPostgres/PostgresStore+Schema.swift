import Foundation
import SkerryCore

extension PostgresStore {
    /// The schema in PostgreSQL's dialect.
    static let schema = StoreSchema(dialect: .postgres)

    /// The sequence that gives the keys of `entity`'s hierarchy (named after its root; a hash
    /// ends the name where the root's is too long for PostgreSQL, see
    /// ``SkerryCore/StoreIndexes/fittingName(_:)``).
    static func sequenceName(_ entity: String) -> String { StoreIndexes.fittingName(sequencePrefix + entity) }

    /// What the names of the key sequences start with.
    static let sequencePrefix = "_skerry_seq_"

    /// Creates the schema of a new store, or checks and migrates an existing one, in one
    /// transaction under an advisory lock on the store's schema: when several instances start at
    /// once, one creates or migrates and the others wait, then find the schema ready.
    /// Returns the store's identifier.
    ///
    /// A store whose schema is current for the model and this version of Skerry is loaded
    /// without any DDL, so that a role that does not own the schema (an application role granted
    /// the store's tables and sequences) can load it; a store that needs a change refuses such a
    /// role with ``ownerNeeded(_:_:role:existed:)``'s error, leaving the schema as it was.
    static func prepareSchema(
        pool: PostgresConnectionPool, description: StoreDescription, options: PostgresStoreOptions,
        model: ObjectModel, entities: [EntityDescription], events: EventHub? = nil
    ) throws(SkerryError) -> String {
        // Who loads, and whether the store was there: what a refused change is reported with.
        var role = "", existed = false
        do {
            return try pool.withConnection { connection in
                try connection.transaction {
                    let schemaName = try options.schema ?? connection.query("SELECT current_schema()").text(0, 0)
                    role = try connection.query(
                        "SELECT pg_advisory_xact_lock(hashtextextended(?, 0)), current_user::text", [.string("skerry:" + schemaName)]
                    ).text(0, 1)
                    try checkNames(entities, description)
                    if let schema = options.schema,
                        try connection.query("SELECT 1 FROM pg_namespace WHERE nspname = ?", [.string(schema)]).rowCount == 0
                    {
                        try connection.execute("CREATE SCHEMA IF NOT EXISTS \(SQLBuilder.quote(schema))")
                    }
                    let exists = try connection.query(
                        "SELECT to_regclass(?) IS NOT NULL", [.string(SQLBuilder.quote(StoreSchema.metadataTable))])
                    if exists.value(0, 0, as: .boolean) == .bool(true) {
                        existed = true
                        let identifier = try migrateIfNeeded(
                            connection, description: description, model: model, entities: entities, events: events)
                        try restoreUniqueIndexes(entities, schemaName: schemaName, description, connection)
                        return identifier
                    }
                    return try schema.create(model: model, entities: entities, connection) {
                        try createSequences(entities, connection)
                        try syncFamilyUniqueness(entities, connection)
                        try createFunctions(connection)
                        try createChangesTable(connection)
                    }
                }
            }
        } catch let error as SkerryError {
            if let refusal = error.underlyingError as? PostgresError, refusal.sqlState == .insufficientPrivilege {
                throw ownerNeeded(refusal, description, role: role, existed: existed)
            }
            throw error
        } catch let error as PostgresError {
            if error.sqlState == .insufficientPrivilege { throw ownerNeeded(error, description, role: role, existed: existed) }
            throw loadError(error, description)
        } catch {
            throw SkerryError(.storeLoadFailed, "Cannot load \(description): \(error)")
        }
    }

    /// The load's error when the server refused `role` a change the store needs (a privilege
    /// only the schema's owner has): ``SkerryCore/SkerryError/Code/modelMismatch`` for a store
    /// that `existed` (its schema is not current for the model or this version of Skerry, and
    /// the role cannot migrate it), ``SkerryCore/SkerryError/Code/storeLoadFailed`` for a store
    /// the role cannot create. The load's transaction rolled back: the schema is as it was.
    static func ownerNeeded(_ refusal: PostgresError, _ description: StoreDescription, role: String, existed: Bool) -> SkerryError {
        let who = role.isEmpty ? "the connecting role" : "role \(SQLBuilder.quote(role))"
        var failure =
            existed
            ? SkerryError(
                .modelMismatch,
                "\(description) needs a migration (its schema is not current for this model or this version of Skerry) that \(who) may not make: the server refused it (\(refusal.message)). Load the store once as a role that owns its schema (the role that migrates on deploy), then load it as \(who). The store was left as it was."
            )
            : SkerryError(
                .storeLoadFailed,
                "Cannot create \(description): \(who) may not create its schema objects (\(refusal.message)). Create the store as a role that owns its schema, then grant \(who) its tables and sequences."
            )
        failure.underlyingError = refusal
        return failure
    }

    /// The names of `names` (tables, indexes, sequences, as the server keeps them) that the
    /// current schema does not hold, in their order: what a load has to create (one round trip).
    static func missingRelations(_ names: [String], _ connection: PostgresConnection) throws -> [String] {
        guard !names.isEmpty else { return [] }
        let list = String(decoding: try JSONEncoder().encode(names), as: UTF8.self)
        return try connection.textRows(
            """
            SELECT n FROM json_array_elements_text(?::json) WITH ORDINALITY AS t(n, i) \
            WHERE to_regclass(quote_ident(current_schema()) || '.' || quote_ident(n)) IS NULL ORDER BY i
            """, [.string(list)]
        ).map { $0[0] }
    }

    /// Refuses `entities` when two of their tables, or two columns of one table, would have the
    /// same name on the server: PostgreSQL keeps the first 63 bytes of a name (and cuts it
    /// silently), so names that start alike for that long would be one table or column.
    /// - Throws: ``SkerryCore/SkerryError/Code/storeLoadFailed`` naming both names.
    static func checkNames(_ entities: [EntityDescription], _ description: StoreDescription) throws(SkerryError) {
        func refuseClashes(_ names: [String], _ what: String, entity: String?) throws(SkerryError) {
            var seen: [String: String] = [:]
            for name in names {
                let stored = StoreIndexes.storedName(name)
                if let other = seen[stored], other != name {
                    throw SkerryError(
                        .storeLoadFailed,
                        "\(description) cannot hold the \(what) '\(other)' and '\(name)': PostgreSQL keeps the first \(StoreIndexes.identifierLimit) bytes of a name, and both would be '\(stored)'. Rename one in the model (its renaming identifier keeps the old name for migrations).",
                        entityName: entity, key: name)
                }
                seen[stored] = name
            }
        }
        let layout = RelationshipLayout(entities: entities)
        try refuseClashes(entities.map(\.name) + layout.joinTables.sorted(), "tables", entity: nil)
        for entity in entities {
            let columns =
                [SQLBuilder.primaryKeyColumn, SQLBuilder.versionColumn] + entity.storedAttributes.map(\.name)
                + (layout.extraColumns[entity.name] ?? []).sorted()
            try refuseClashes(columns, "columns of '\(entity.name)'", entity: entity.name)
        }
    }

    /// Creates the missing key sequences: one per hierarchy, named after its root
    /// (``SkerryCore/StoreWritePlanner/keyRoot(_:among:)``); one round trip when none is missing.
    static func createSequences(_ entities: [EntityDescription], _ connection: PostgresConnection) throws {
        let roots = entities.filter { StoreWritePlanner.keyRoot($0, among: entities) === $0 }
        guard !roots.isEmpty else { return }
        // A store made before sequence names were kept within 63 bytes has the server's cut of
        // a long one: it is renamed (not made again from 1, which would hand out used keys).
        for root in roots where sequenceName(root.name) != sequencePrefix + root.name {
            let old = SQLBuilder.quote(StoreIndexes.storedName(sequencePrefix + root.name))
            let new = SQLBuilder.quote(sequenceName(root.name))
            let renames = try connection.query(
                "SELECT to_regclass(?) IS NOT NULL AND to_regclass(?) IS NULL", [.string(old), .string(new)])
            if renames.value(0, 0, as: .boolean) == .bool(true) { try connection.execute("ALTER SEQUENCE \(old) RENAME TO \(new)") }
        }
        // Only the missing ones: `CREATE … IF NOT EXISTS` needs the right to create in the schema.
        let missing = try missingRelations(roots.map { sequenceName($0.name) }, connection)
        guard !missing.isEmpty else { return }
        try connection.execute(missing.map { "CREATE SEQUENCE IF NOT EXISTS \(SQLBuilder.quote($0))" }.joined(separator: "; "))
    }

    /// The native PostgreSQL type of an attribute type's column (``SkerryCore/SQLDialect``).
    static func columnType(_ type: AttributeType) -> String { SQLDialect.postgres.columnType(type) }

    /// Brings an existing store to `entities`: nothing when the schema is the same; a
    /// MigrationPlan's steps from the version the store was written with; additive changes in
    /// place (``StoreSchema/migrateInPlace``); other changes through the migration engine
    /// (PostgresStore+Migration.swift). All of it in the load's transaction.
    /// The tables and sequences the change makes get the grants of the store's
    /// (``Privileges``).
    private static func migrateIfNeeded(
        _ connection: PostgresConnection, description: StoreDescription,
        model: ObjectModel, entities: [EntityDescription], events: EventHub?
    ) throws -> String {
        let recorded = try schema.recorded(connection, description)
        let privileges = try Privileges(
            connection, tables: recorded.schema.entities.map(\.name) + RelationshipLayout(schema: recorded.schema).joinTables)
        try migrateSchema(connection, recorded, description: description, model: model, entities: entities, events: events)
        try privileges.extend(connection, tables: entities.map(\.name) + RelationshipLayout(entities: entities).joinTables)
        return recorded.identifier
    }

    /// ``migrateIfNeeded(_:description:model:entities:events:)`` from the recorded schema.
    private static func migrateSchema(
        _ connection: PostgresConnection, _ recorded: StoreSchema.Recorded, description: StoreDescription,
        model: ObjectModel, entities: [EntityDescription], events: EventHub?
    ) throws {
        try createFunctions(connection) // this version's definitions
        try createChangesTable(connection) // stores created before change propagation lack it
        // Stores written before a relationship with a transient inverse was stored lack its table
        // or column; its indexes come with the in-place migration when the schema changed.
        try schema.addMissingRelationshipStorage(
            recorded.schema, entities: recorded.schema.shape == StoredSchema(entities: entities).shape ? entities : nil, connection)
        // A plan's steps from the version the store was written with, then one inferred step
        // (as Core Data's lightweight migration) when what is left is not additive.
        let plan = MigrationStepSpec.planSteps(
            description.migrationPlan, recordedHash: recorded.metadata["modelVersionHash"], from: recorded.schema,
            description: description)
        var steps = plan.steps
        let inferred = SchemaMigration(from: plan.reached, to: entities)
        // An entity that changed hierarchy has keys counted apart from its new hierarchy's: the
        // engine carries it (renumbering keys that clash), not the additive change in place.
        let isAdditive = inferred.incompatibilities.isEmpty && inferred.changedHierarchies.isEmpty
        if !isAdditive {
            guard description.shouldMigrateAutomatically else {
                throw SkerryError(
                    .modelMismatch, "\(description) needs a migration (automatic migration is off). The store was left untouched.")
            }
            steps.append(
                MigrationStepSpec(
                    source: plan.reached, sourceEntities: [], destination: entities, model: model, custom: nil,
                    number: plan.steps.count + 1))
        }
        if !steps.isEmpty {
            try runMigration(
                steps, description: description, model: model, events: events,
                fromVersionHash: recorded.metadata["modelVersionHash"], connection)
        }
        guard isAdditive else { return }
        try schema.migrateInPlace(connection, recorded.reaching(plan.reached), description: description, model: model, entities: entities) {
            try createSequences(entities, connection)
            do {
                try syncFamilyUniqueness(entities, connection)
            } catch let error as SkerryError where error.code == .constraintViolation {
                // The rows break a constraint the model now spans over a hierarchy: this model
                // cannot be migrated to (as the SQLite store reports it); the transaction rolls back.
                throw SkerryError(
                    .modelMismatch, "\(description) cannot be migrated to this model: \(error.message)",
                    entityName: error.entityName, key: error.key)
            }
        }
    }
}

extension PostgresConnection: StoreSQLConnection {
    func run(_ sql: String, _ values: [AttributeValue]) throws {
        try query(sql, values)
    }

    func textRows(_ sql: String, _ values: [AttributeValue]) throws -> [[String]] {
        let result = try query(sql, values)
        return (0..<result.rowCount).map { row in
            (0..<result.columnCount).map { result.isNull(row, $0) ? "" : result.text(row, $0) }
        }
    }

    func valueRows(_ sql: String, _ values: [AttributeValue], types: [AttributeType]) throws -> [[AttributeValue?]] {
        let result = try query(sql, values)
        let decoders = result.decoders(types, from: 0)
        return (0..<result.rowCount).map { row in
            decoders.indices.map { result.value(row, Int32($0), decoders[$0]) }
        }
    }
}
