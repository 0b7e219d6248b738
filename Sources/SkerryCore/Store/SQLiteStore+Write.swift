extension SQLiteStore {
    func write<T>(_ changes: StoreWrite, then next: () throws -> T) throws -> (insertedKeys: [Int64], next: T) {
        do {
            return try pool.write { connection in try writeTransaction(changes, connection, then: next) }
        } catch let conflicts as StoreWriteConflicts {
            throw conflicts          // for the context's merge policy, untouched
        } catch {
            throw Self.mapError(error, entity: nil)
        }
    }

    private func writeTransaction<T>(_ changes: StoreWrite, _ connection: SQLiteConnection,
                                     then next: () throws -> T) throws -> (insertedKeys: [Int64], next: T) {
        try connection.writeTransaction {
            // Deletes first, then updates, then inserts: a save that deletes a row and inserts
            // another with the same unique value must not trip over its own old row.
            var conflicts = StoreWriteConflicts()
            try Self.writeDeletes(changes.deletes, connection, &conflicts)
            try Self.writeUpdates(changes.updates, connection, &conflicts)
            let insertedKeys = try Self.writeInserts(changes.inserts, connection, &conflicts)
            if !conflicts.isEmpty {
                conflicts.store = identity
                throw conflicts
            }
            return (insertedKeys, try next())
        }
    }

    /// The row with this key as it is now, or nil.
    private static func currentRow(_ objectID: ObjectID, _ connection: SQLiteConnection) throws -> RowSnapshot? {
        let statement = try connection.cachedStatement(SQLBuilder.selectRows(objectID.entity) + " WHERE \(SQLBuilder.quote(SQLBuilder.primaryKeyColumn)) = ?")
        defer { statement.reset() }
        try statement.bind([.int(objectID.key)])
        return try statement.step() ? decodeRow(statement, objectID.entity) : nil
    }

    /// Deletes rows; a row whose version changed since the context read it is a conflict (a row
    /// already gone is not: the delete's aim is met).
    private static func writeDeletes(_ deletes: [(objectID: ObjectID, expectedVersion: Int64?)],
                                     _ connection: SQLiteConnection, _ conflicts: inout StoreWriteConflicts) throws {
        for (objectID, expectedVersion) in deletes {
            let entity = objectID.entity
            guard let expectedVersion else {
                try connection.cachedStatement(SQLBuilder.deleteRow(entity, checkingVersion: false)).run([.int(objectID.key)])
                continue
            }
            try connection.cachedStatement(SQLBuilder.deleteRow(entity, checkingVersion: true))
                .run([.int(objectID.key), .int(expectedVersion)])
            if connection.changes == 0, let stored = try currentRow(objectID, connection) {
                conflicts.versionConflicts.append((objectID, stored))
            }
        }
    }

    /// Updates the changed columns of rows whose version is still the one read; the others
    /// (changed or deleted since) are conflicts.
    private static func writeUpdates(_ updates: [RowUpdate], _ connection: SQLiteConnection,
                                     _ conflicts: inout StoreWriteConflicts) throws {
        for update in updates {
            let sql = SQLBuilder.update(update.objectID.entity, changedIndexes: update.changes.map(\.index))
            do {
                try connection.cachedStatement(sql).run(update.changes.map(\.value)
                    + [.int(update.objectID.key), .int(update.expectedVersion)])
            } catch {
                throw mapWriteError(error, update.objectID)
            }
            if connection.changes == 0 {
                conflicts.versionConflicts.append((update.objectID, try currentRow(update.objectID, connection)))
            }
        }
    }

    /// Inserts rows with keys from each entity's sequence; returns the keys, in order. An insert
    /// that violates a uniqueness constraint is a conflict, with the row it collides with.
    private static func writeInserts(_ inserts: [(objectID: ObjectID, values: [AttributeValue])],
                                     _ connection: SQLiteConnection, _ conflicts: inout StoreWriteConflicts) throws -> [Int64] {
        var insertedKeys: [Int64] = []
        insertedKeys.reserveCapacity(inserts.count)
        var nextKeys: [ObjectIdentifier: (entity: EntityDescription, next: Int64)] = [:]
        // The insert statement of the previous row's entity: saves rebuilding the SQL text for
        // every row of a bulk insert.
        var current: (entity: EntityDescription, statement: SQLiteStatement)?
        for (index, insert) in inserts.enumerated() {
            let entity = insert.objectID.entity
            let key = try nextKeys[ObjectIdentifier(entity)]?.next ?? nextPrimaryKey(entity, connection)
            nextKeys[ObjectIdentifier(entity)] = (entity, key + 1)
            insertedKeys.append(key)
            do {
                if current?.entity !== entity {
                    current = (entity, try connection.cachedStatement(SQLBuilder.insert(entity)))
                }
                let statement = current!.statement
                statement.reset()
                try statement.bind(.int(key), at: 1)
                try statement.bind(insert.values, from: 2)
                while try statement.step() {}
            } catch {
                guard error.isUniqueConstraintViolation,
                      let (constraint, row) = try collidingRow(entity, insert.values, connection) else {
                    throw mapWriteError(error, insert.objectID)
                }
                let earlier = (0..<index).first { insertedKeys[$0] == row.primaryKey && inserts[$0].objectID.entity === entity }
                conflicts.uniquenessConflicts.append((index, constraint, earlier.map { .insert(index: $0) } ?? .row(row)))
            }
        }
        let saveKey = try connection.cachedStatement(
            "INSERT OR REPLACE INTO \(SQLBuilder.quote(keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
        for (entity, next) in nextKeys.values {
            try saveKey.run([.string(entity.name), .int(next)])
        }
        return insertedKeys
    }

    /// The first uniqueness constraint of `entity` that `values` collide with, and the row they
    /// collide with. A nil value never collides (SQLite treats NULLs in UNIQUE indexes as distinct).
    private static func collidingRow(_ entity: EntityDescription, _ values: [AttributeValue],
                                     _ connection: SQLiteConnection) throws -> (constraint: [String], row: RowSnapshot)? {
        for constraint in entity.uniquenessConstraints {
            let indexes = constraint.compactMap { entity.attributeIndex(named: $0) }
            let bound = indexes.map { values[$0] }
            guard !bound.contains(where: \.isNull) else { continue }
            let condition = constraint.map { "\(SQLBuilder.quote($0)) = ?" }.joined(separator: " AND ")
            let statement = try connection.cachedStatement(SQLBuilder.selectRows(entity) + " WHERE " + condition)
            defer { statement.reset() }
            try statement.bind(bound)
            if try statement.step() { return (constraint, try decodeRow(statement, entity)) }
        }
        return nil
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
