import SkerryCore

// `StoreCoordinator.destroyPersistentStore(with:)` for PostgreSQL stores: a store in a schema of its
// own is destroyed as Core Data destroys a file, by dropping the schema with everything in it.

extension PostgresStoreFactory {
    /// Two descriptions name the same PostgreSQL store when they name the same connection string
    /// and schema.
    func describesSameStore(as other: StoreDescription) -> Bool {
        guard let options = other.postgresOptions else { return false }
        return options.connectionString == self.options.connectionString && options.schema == self.options.schema
    }

    /// Whether the store's schema exists (true for a store in the connection's default schema).
    func placeExists() throws(SkerryError) -> Bool {
        guard let schema = options.schema else { return true }
        do {
            let connection = try PostgresConnection(connectionString: options.connectionString)
            return try connection.query("SELECT count(*) FROM pg_namespace WHERE nspname = ?", [.string(schema)]).int64(0, 0) > 0
        } catch {
            throw PostgresStore.mapError(error, entity: nil)
        }
    }

    /// Drops the store's schema, with every table, sequence, function and trigger in it, under the
    /// advisory lock a load takes (an instance loading the store meanwhile waits, then creates a
    /// new one). A schema that does not exist is no error (as a missing file is not); one that holds
    /// no Skerry store, or a store in the connection's default schema (shared with whatever else
    /// is there), is refused.
    func destroyStore() throws(SkerryError) {
        guard let schema = options.schema else {
            throw SkerryError(
                .invalidArgument,
                "\(storeLabel) has no schema of its own: its tables share the connection's default schema with whatever else is there, "
                    + "so Skerry does not drop them. Give stores a schema (StoreDescription.postgres(_:schema:)) to destroy them.")
        }
        do {
            let connection = try PostgresConnection(connectionString: options.connectionString)
            try connection.transaction {
                try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", [.string("skerry:" + schema)])
                let exists = try connection.query("SELECT count(*) FROM pg_namespace WHERE nspname = ?", [.string(schema)])
                guard exists.int64(0, 0) > 0 else { return }
                guard try Self.holdsStore(schema, connection) else {
                    throw SkerryError(
                        .invalidArgument,
                        "Schema \(schema) holds no Skerry store (no \(StoreSchema.metadataTable) table): Skerry does not drop it.")
                }
                try connection.execute("DROP SCHEMA \(SQLBuilder.quote(schema)) CASCADE")
            }
        } catch let error as SkerryError {
            throw error
        } catch {
            throw PostgresStore.mapError(error, entity: nil)
        }
    }

    /// Whether `schema` holds the metadata table of a Skerry store.
    private static func holdsStore(_ schema: String, _ connection: PostgresConnection) throws -> Bool {
        let result = try connection.query(
            "SELECT to_regclass(?) IS NOT NULL", [.string(SQLBuilder.quote(schema) + "." + SQLBuilder.quote(StoreSchema.metadataTable))])
        return result.value(0, 0, as: .boolean) == .bool(true)
    }
}

extension PostgresStoreFactory {
    /// What the store's schema holds, read without changing anything
    /// (``SkerryCore/ObjectStoreFactory/existingStore(entities:)``): nil when it holds no Skerry
    /// store (or does not exist).
    func existingStore(entities: [EntityDescription]) throws(SkerryError) -> ExistingStore? {
        do {
            let connection = try PostgresConnection(connectionString: options.connectionString)
            let schema = try options.schema ?? connection.query("SELECT current_schema()").text(0, 0)
            func table(_ name: String) -> String { SQLBuilder.quote(schema) + "." + SQLBuilder.quote(name) }
            func exists(_ name: String) throws -> Bool {
                try connection.query("SELECT to_regclass(?) IS NOT NULL", [.string(table(name))]).value(0, 0, as: .boolean) == .bool(true)
            }
            guard try exists(StoreSchema.metadataTable) else { return nil }
            let hash = try connection.query(
                "SELECT \"value\" FROM \(table(StoreSchema.metadataTable)) WHERE \"key\" = 'modelVersionHash'")
            var existing = ExistingStore(modelVersionHash: hash.rowCount > 0 ? hash.text(0, 0) : nil, occupied: nil)
            for entity in entities where try exists(entity.name) {
                let count = try connection.scalarInt64("SELECT count(*) FROM \(table(entity.name))") ?? 0
                if count > 0 {
                    existing.occupied = (entity.name, Int(count))
                    break
                }
            }
            return existing
        } catch let error as SkerryError {
            throw error
        } catch {
            throw PostgresStore.mapError(error, entity: nil)
        }
    }
}
