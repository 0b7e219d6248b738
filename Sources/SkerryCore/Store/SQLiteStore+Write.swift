extension SQLiteStore {
    func write<T>(_ changes: StoreWrite, then next: () throws -> T) throws -> (insertedKeys: [Int64], next: T) {
        try writeConnection(nil) { connection in
            try connection.writeTransaction {
                // Deletes first, then updates, then inserts: a save that deletes a row and inserts
                // another with the same unique value must not trip over its own old row.
                let conflicts = try Self.writeDeletes(changes.deletes, connection)
                    + Self.writeUpdates(changes.updates, connection)
                let insertedKeys = try Self.writeInserts(changes.inserts, connection)
                if !conflicts.isEmpty {
                    throw SkerryError(.mergeConflict,
                                      "The save found \(conflicts.count) object(s) changed or deleted in the store since this context read them: "
                                        + conflicts.map(\.description).joined(separator: ", ")
                                        + ". Refresh them and save again.",
                                      entityName: conflicts[0].entityName, objectIDs: conflicts)
                }
                return (insertedKeys, try next())
            }
        }
    }

    /// Deletes rows; returns those whose version changed since the context read them.
    private static func writeDeletes(_ deletes: [(objectID: ObjectID, expectedVersion: Int64?)],
                                     _ connection: SQLiteConnection) throws -> [ObjectID] {
        var conflicts: [ObjectID] = []
        for (objectID, expectedVersion) in deletes {
            let entity = objectID.entity
            guard let expectedVersion else {
                try connection.cachedStatement(SQLBuilder.deleteRow(entity, checkingVersion: false)).run([.int(objectID.key)])
                continue
            }
            try connection.cachedStatement(SQLBuilder.deleteRow(entity, checkingVersion: true))
                .run([.int(objectID.key), .int(expectedVersion)])
            // Nothing deleted: either the row is already gone (fine) or it changed (a conflict).
            if connection.changes == 0, try connection.scalarInt64(SQLBuilder.rowExists(entity), [.int(objectID.key)]) != nil {
                conflicts.append(objectID)
            }
        }
        return conflicts
    }

    /// Updates the changed columns of rows whose version is still the one read; returns the
    /// others (changed or deleted since).
    private static func writeUpdates(_ updates: [RowUpdate], _ connection: SQLiteConnection) throws -> [ObjectID] {
        var conflicts: [ObjectID] = []
        for update in updates {
            let sql = SQLBuilder.update(update.objectID.entity, changedIndexes: update.changes.map(\.index))
            do {
                try connection.cachedStatement(sql).run(update.changes.map(\.value)
                    + [.int(update.objectID.key), .int(update.expectedVersion)])
            } catch {
                throw mapWriteError(error, update.objectID)
            }
            if connection.changes == 0 { conflicts.append(update.objectID) }
        }
        return conflicts
    }

    /// Inserts rows with keys from each entity's sequence; returns the keys, in order.
    private static func writeInserts(_ inserts: [(objectID: ObjectID, values: [AttributeValue])],
                                     _ connection: SQLiteConnection) throws -> [Int64] {
        var insertedKeys: [Int64] = []
        insertedKeys.reserveCapacity(inserts.count)
        var nextKeys: [ObjectIdentifier: (entity: EntityDescription, next: Int64)] = [:]
        // The insert statement of the previous row's entity: saves rebuilding the SQL text for
        // every row of a bulk insert.
        var current: (entity: EntityDescription, statement: SQLiteStatement)?
        for insert in inserts {
            let entity = insert.objectID.entity
            let key: Int64
            do {
                key = try nextKeys[ObjectIdentifier(entity)]?.next ?? nextPrimaryKey(entity, connection)
                nextKeys[ObjectIdentifier(entity)] = (entity, key + 1)
                if current?.entity !== entity {
                    current = (entity, try connection.cachedStatement(SQLBuilder.insert(entity)))
                }
                let statement = current!.statement
                statement.reset()
                try statement.bind(.int(key), at: 1)
                try statement.bind(insert.values, from: 2)
                while try statement.step() {}
            } catch {
                throw mapWriteError(error, insert.objectID)
            }
            insertedKeys.append(key)
        }
        let saveKey = try connection.cachedStatement(
            "INSERT OR REPLACE INTO \(SQLBuilder.quote(keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
        for (entity, next) in nextKeys.values {
            try saveKey.run([.string(entity.name), .int(next)])
        }
        return insertedKeys
    }

    /// The next unused primary key of `entity`: past both the recorded sequence and the largest
    /// key in the table. Runs inside the write transaction, so no other writer can interleave.
    private static func nextPrimaryKey(_ entity: EntityDescription, _ connection: SQLiteConnection) throws -> Int64 {
        let q = SQLBuilder.quote
        return try connection.scalarInt64("""
            SELECT max(coalesce((SELECT "next" FROM \(q(keysTable)) WHERE "entity" = ?), 1), \
            coalesce((SELECT max(\(q(SQLBuilder.primaryKeyColumn))) FROM \(q(entity.name))), 0) + 1)
            """, [.string(entity.name)]) ?? 1
    }

    private static func mapWriteError(_ error: any Error, _ objectID: ObjectID) -> SkerryError {
        var mapped = mapError(error, entity: objectID.entity)
        if mapped.objectIDs.isEmpty { mapped.objectIDs = [objectID] }
        if mapped.code == .constraintViolation {
            mapped = SkerryError(.constraintViolation,
                                 "Saving \(objectID) would violate a uniqueness constraint of '\(objectID.entityName)': \(mapped.sqlite?.message ?? mapped.message).",
                                 entityName: objectID.entityName, key: mapped.sqlite.flatMap(Self.constraintColumns),
                                 objectID: objectID, sqlite: mapped.sqlite)
        }
        return mapped
    }

    /// The columns named in SQLite's "UNIQUE constraint failed: T.a, T.b" message, as "a,b".
    private static func constraintColumns(_ error: SQLiteError) -> String? {
        guard let range = error.message.range(of: "constraint failed: ") else { return nil }
        return error.message[range.upperBound...]
            .split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).split(separator: ".").last.map(String.init) ?? "" }
            .joined(separator: ",")
    }

    func batchDelete(_ entity: EntityDescription, predicate: ResolvedPredicate?) throws(SkerryError) -> [Int64] {
        let query = StoreQuery(entity: entity, predicate: predicate, sortKeys: [])
        let q = SQLBuilder.quote
        let select = SQLBuilder.query("SELECT \(q(SQLBuilder.primaryKeyColumn)) FROM \(q(entity.name))", query, ordered: false)
        let delete = SQLBuilder.query("DELETE FROM \(q(entity.name))", query, ordered: false)
        return try writeConnection(entity) { connection in
            try connection.writeTransaction {
                let statement = try connection.cachedStatement(select.text)
                try statement.bind(select.bindings)
                var keys: [Int64] = []
                while try statement.step() { keys.append(statement.int64(at: 0)) }
                try connection.cachedStatement(delete.text).run(delete.bindings)
                return keys
            }
        }
    }
}
