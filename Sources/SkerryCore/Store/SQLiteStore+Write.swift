extension SQLiteStore {
    /// The history is recorded in the write's own transaction, before `next`: it takes no lock
    /// beyond the store's write lock, held from the start (so no ``StoreWriteFinish``). Conflicts
    /// are resolved with `resolve` under that lock, which no other writer (of this process or
    /// another) can take before the commit: the rows the conflicts read stay as read, so the next
    /// attempt writes them.
    func write<T>(_ changes: StoreWrite, resolving resolve: StoreWriteResolver?, then next: (StoreWriteFinish?) throws -> T) throws
        -> (insertedKeys: [Int64], next: T)
    {
        try checkWritable()
        do {
            return try pool.write { connection in try writeTransaction(changes, connection, resolving: resolve, then: next) }
        } catch let conflicts as StoreWriteConflicts {
            throw conflicts // for the context's merge policy, untouched
        } catch let error as SkerryError {
            throw error // the resolver's: the save's own words
        } catch {
            throw Self.mapError(error, entity: nil)
        }
    }

    private func writeTransaction<T>(
        _ changes: StoreWrite, _ connection: SQLiteConnection, resolving resolve: StoreWriteResolver?,
        then next: (StoreWriteFinish?) throws -> T
    ) throws -> (insertedKeys: [Int64], next: T) {
        try connection.writeTransaction {
            if checksHistoryTracking { try refuseIfHistoryTracked(connection) }
            guard let resolve else {
                let keys = try writeChanges(changes, connection, recordsHistory: tracksPersistentHistory)
                return (keys, try next(nil))
            }
            // Each attempt's statements run inside a savepoint, undone when they find conflicts
            // (those of the attempt's statements only: `next` runs once the savepoint is gone).
            var changes = changes
            while true {
                try connection.cachedStatement("SAVEPOINT \(Self.attemptSavepoint)").run([])
                let keys: [Int64]
                do {
                    keys = try writeChanges(changes, connection, recordsHistory: tracksPersistentHistory)
                } catch let conflicts as StoreWriteConflicts {
                    connection.resetBusyStatements()
                    try connection.cachedStatement("ROLLBACK TO \(Self.attemptSavepoint)").run([])
                    try connection.cachedStatement("RELEASE \(Self.attemptSavepoint)").run([])
                    changes = try resolve(conflicts)
                    continue
                }
                try connection.cachedStatement("RELEASE \(Self.attemptSavepoint)").run([])
                return (keys, try next(nil))
            }
        }
    }

    /// The savepoint of one attempt of a write that resolves its conflicts in its transaction.
    private static let attemptSavepoint = "skerry_write_attempt"

    /// Writes the rows of another store, as ``ObjectStore/importWrites(_:keyFloors:)`` describes:
    /// each write `next` returns, in one transaction, without history. The keys of the inserts
    /// (all permanent) are the rows' keys; later inserts get keys past the largest key of each
    /// hierarchy's tables (``nextPrimaryKey(_:among:_:)``) and, recorded in the keys table, at or
    /// past the copied store's sequences (`keyFloors`).
    func importWrites(_ next: () throws -> StoreWrite?, keyFloors: () throws -> [String: Int64]) throws {
        try checkWritable()
        do {
            try pool.write { connection in
                try connection.writeTransaction {
                    while let changes = try next() { _ = try writeChanges(changes, connection, recordsHistory: false) }
                    try raiseKeySequences(to: keyFloors(), connection)
                }
            }
        } catch let conflicts as StoreWriteConflicts {
            throw conflicts
        } catch let error as SkerryError {
            throw error
        } catch {
            throw Self.mapError(error, entity: nil)
        }
    }

    /// The statements of one write, inside its transaction; returns the keys of the inserts.
    private func writeChanges(_ changes: StoreWrite, _ connection: SQLiteConnection, recordsHistory: Bool) throws -> [Int64] {
        // Keys first, so that any row may point at any insert. Then deletes, updates and
        // inserts — deletes first, so that a save that deletes a row and inserts another with
        // the same unique value does not trip over its own old row — then to-many members.
        let keys = try allocateKeys(changes.inserts, connection)
        let resolve = StoreWritePlanner.keyResolver(changes, keys: keys)
        var conflicts = StoreWriteConflicts()
        var members: [MembersWrite] = []
        // The rows the deletes removed, for the history (nil: not recorded), and the objects
        // whose links to them the deletes cleared.
        var deleted: [HistoryEntry]? = recordsHistory ? [] : nil
        var unlinked: [HistoryEntry] = []
        try writeDeletes(changes.deletes, connection, &conflicts, &deleted, &unlinked)
        try writeUpdates(changes.updates, resolve, connection, &conflicts, &members)
        try writeInserts(changes.inserts, keys: keys, resolve, connection, &conflicts, &members)
        try writeMembers(members, resolve, connection)
        if !conflicts.isEmpty {
            conflicts.store = identity
            throw conflicts
        }
        if let deleted {
            let unlinked = HistoryEntry.unlinkedUpdates(unlinked, of: changes)
            try recordHistory(HistoryEntry.entries(of: changes, keys: keys, deleted: deleted, unlinked: unlinked), connection)
        }
        return keys
    }

    /// The next keys of each entity's sequence, one per insert, recorded as used. An insert whose
    /// ID is already permanent keeps its key (reserved earlier by ``reservePrimaryKeys(_:count:)``).
    private func allocateKeys(_ inserts: [RowInsert], _ connection: SQLiteConnection) throws -> [Int64] {
        // One sequence per hierarchy: keys are unique among an entity and its sub-entities.
        var next: [ObjectIdentifier: (entity: EntityDescription, key: Int64)] = [:]
        var keys: [Int64] = []
        keys.reserveCapacity(inserts.count)
        // The sequence of the current run of inserts of one entity (a bulk insert is one run):
        // looked up, and written back to `next`, once per run rather than per insert.
        var run: (entity: EntityDescription, root: EntityDescription, key: Int64)?
        for insert in inserts {
            guard insert.objectID.isTemporary else {
                keys.append(insert.objectID.key)
                continue
            }
            let entity = insert.objectID.entity
            if run?.entity !== entity {
                if let run { next[ObjectIdentifier(run.root)] = (run.root, run.key) }
                let root = Self.keyRoot(entity, among: entities)
                let key = try next[ObjectIdentifier(root)]?.key ?? Self.nextPrimaryKey(entity, among: entities, connection)
                run = (entity, root, key)
            }
            keys.append(run!.key)
            run!.key += 1
        }
        if let run { next[ObjectIdentifier(run.root)] = (run.root, run.key) }
        let saveKey = try connection.cachedStatement(
            "INSERT OR REPLACE INTO \(SQLBuilder.quote(Self.keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
        for (entity, key) in next.values {
            try saveKey.run([.string(entity.name), .int(key)])
        }
        return keys
    }

    /// Records, for each hierarchy, a next key at least the largest of `floors` of its entities
    /// (by entity name), so that no later insert gets a key below it.
    private func raiseKeySequences(to floors: [String: Int64], _ connection: SQLiteConnection) throws {
        let saveKey = try connection.cachedStatement(
            "INSERT OR REPLACE INTO \(SQLBuilder.quote(Self.keysTable)) (\"entity\", \"next\") VALUES (?, ?)")
        for root in entities where Self.keyRoot(root, among: entities) === root {
            let floor = entities.filter { Self.keyRoot($0, among: entities) === root }.compactMap { floors[$0.name] }.max() ?? 1
            let next = try Self.nextPrimaryKey(root, among: entities, connection)
            if floor > next { try saveKey.run([.string(root.name), .int(floor)]) }
        }
    }

    /// The keys of `entity`'s own rows greater than `key`, in order, at most `limit`
    /// (``ObjectStore/fetchKeys(_:after:limit:)``): a range of the primary key.
    func fetchKeys(_ entity: EntityDescription, after key: Int64, limit: Int) throws(SkerryError) -> [Int64] {
        try read(entity) { connection in
            let pk = SQLBuilder.quote(SQLBuilder.primaryKeyColumn)
            let statement = try connection.cachedStatement(
                "SELECT \(pk) FROM \(SQLBuilder.quote(entity.name)) WHERE \(pk) > ? ORDER BY \(pk) LIMIT ?")
            defer { statement.reset() }
            try statement.bind([.int(key), .int(Int64(limit))])
            var keys: [Int64] = []
            keys.reserveCapacity(limit)
            while try statement.step() { keys.append(statement.int64(at: 0)) }
            return keys
        }
    }

    /// The next key of each entity's sequence (its hierarchy's), by entity name
    /// (``ObjectStore/nextPrimaryKeys()``).
    func nextPrimaryKeys() throws(SkerryError) -> [String: Int64] {
        try read(nil) { connection in
            var keys: [String: Int64] = [:]
            for root in entities where Self.keyRoot(root, among: entities) === root {
                let next = try Self.nextPrimaryKey(root, among: entities, connection)
                for entity in entities where Self.keyRoot(entity, among: entities) === root { keys[entity.name] = next }
            }
            return keys
        }
    }

    /// The row with this key as it is now, or nil.
    private func currentRow(_ objectID: ObjectID, _ connection: SQLiteConnection) throws -> RowSnapshot? {
        let entityLayout = try layout.of(objectID.entity)
        let statement = try connection.cachedStatement(
            entityLayout.selectRows + " WHERE \(SQLBuilder.quote(SQLBuilder.primaryKeyColumn)) = ?")
        defer { statement.reset() }
        try statement.bind([.int(objectID.key)])
        return try statement.step() ? decodeRow(statement, objectID.entity, entityLayout) : nil
    }

    private typealias MembersWrite = StoreWritePlanner.MembersWrite

    /// Deletes rows, and the join-table rows they take part in; a row whose version changed
    /// since the context read it is a conflict (a row already gone is not: the delete's aim is met).
    /// With history (`deleted` not nil), `unlinked` gets an update of each object whose link to a
    /// deleted row it cleared (``StoreWritePlanner/danglingLinkDeletes(of:_:)``), read just
    /// before the statement that clears it.
    private func writeDeletes(
        _ deletes: [(objectID: ObjectID, expectedVersion: Int64?)],
        _ connection: SQLiteConnection, _ conflicts: inout StoreWriteConflicts, _ deleted: inout [HistoryEntry]?,
        _ unlinked: inout [HistoryEntry]
    ) throws {
        /// What determines a delete's SQL: the entity, and whether the version is checked.
        struct Shape: Equatable {
            let entity: ObjectIdentifier
            let checkingVersion: Bool
        }
        var repeated = RepeatedStatement<Shape>()
        for (objectID, expectedVersion) in deletes {
            let entity = objectID.entity
            let statement = try repeated.statement(
                for: Shape(
                    entity: ObjectIdentifier(entity),
                    checkingVersion: expectedVersion != nil)
            ) { () throws(SQLiteError) in
                try connection.cachedStatement(SQLBuilder.deleteRow(entity, checkingVersion: expectedVersion != nil))
            }
            // The values the history keeps of the row are read before it goes.
            let tombstone = deleted != nil ? try tombstone(of: objectID, connection) : nil
            try statement.run([.int(objectID.key)] + (expectedVersion.map { [.int($0)] } ?? []))
            if connection.changes > 0 {
                deleted?.append(HistoryEntry(type: .delete, entity: entity, key: objectID.key, tombstone: tombstone))
            } else if expectedVersion != nil {
                if let stored = try currentRow(objectID, connection) { conflicts.versionConflicts.append((objectID, stored)) }
                continue
            }
            try planner.joinRowDeletes(of: objectID) { sql, values in try connection.cachedStatement(sql).run(values) }
            let records = deleted != nil
            try planner.danglingLinkDeletes(of: objectID) { sql, values, links in
                if records, let links {
                    let select = try connection.cachedStatement(
                        "SELECT \(links.returning) FROM \(SQLBuilder.quote(links.table)) WHERE \(SQLBuilder.quote(links.column)) = ?")
                    defer { select.reset() }
                    try select.bind(values)
                    while try select.step() {
                        let entity = links.entity(code: links.hasCodes ? select.int64(at: 1) : nil, layout)
                        unlinked.append(HistoryEntry(type: .update, entity: entity, key: select.int64(at: 0), properties: [links.name]))
                    }
                }
                try connection.cachedStatement(sql).run(values)
            }
        }
    }

    /// Updates the changed columns of rows whose version is still the one read; the others
    /// (changed or deleted since) are conflicts.
    private func writeUpdates(
        _ updates: [RowUpdate], _ resolve: StoreKeyResolver, _ connection: SQLiteConnection,
        _ conflicts: inout StoreWriteConflicts, _ members: inout [MembersWrite]
    ) throws {
        var repeated = RepeatedStatement<StoreWritePlanner.UpdateShape>()
        for update in updates {
            // The changed attributes and foreign-key columns; the store keeps the other
            // relationships elsewhere (members written below, or the other side's column).
            let (shape, values) = try planner.plan(update, resolve)
            members += StoreWritePlanner.membersWrites(update.objectID, try layout.of(update.objectID.entity), update.relationshipChanges)
            do {
                let statement = try repeated.statement(for: shape) { () throws(SQLiteError) in
                    try connection.cachedStatement(shape.sql)
                }
                try statement.run(values)
            } catch {
                throw Self.mapWriteError(error, update.objectID)
            }
            if connection.changes == 0 {
                conflicts.versionConflicts.append((update.objectID, try currentRow(update.objectID, connection)))
            }
        }
    }

    /// Inserts rows under their allocated keys. An insert that violates a uniqueness constraint is
    /// a conflict, with the row it collides with.
    private func writeInserts(
        _ inserts: [RowInsert], keys: [Int64], _ resolve: StoreKeyResolver,
        _ connection: SQLiteConnection, _ conflicts: inout StoreWriteConflicts,
        _ members: inout [MembersWrite]
    ) throws {
        var repeated = RepeatedStatement<ObjectIdentifier>() // by entity
        var last: (entity: EntityDescription, layout: SQLiteEntityLayout)?
        // The statement that holds the previous row's bindings, cleared when the run of its
        // entity ends (so that no copy of a large value outlives the save in the statement cache).
        var bound: SQLiteStatement?
        defer { bound?.clearBindings() }
        for (index, insert) in inserts.enumerated() {
            let entity = insert.objectID.entity
            if last?.entity !== entity { last = (entity, try layout.of(entity)) }
            let entityLayout = last!.layout
            let foreignKeys = entityLayout.foreignKeyIndexes.isEmpty ? [] : try planner.foreignKeys(of: insert, entityLayout, resolve)
            do {
                let statement = try repeated.statement(for: ObjectIdentifier(entity)) { () throws(SQLiteError) in
                    try connection.cachedStatement(entityLayout.insertRow)
                }
                if bound !== statement {
                    bound?.clearBindings()
                    bound = statement
                }
                // Every parameter (key, attributes, foreign keys: the whole row) is bound again
                // below, so the previous row's bindings need no clearing.
                assert(statement.parameterCount == entity.storedAttributeCount + 1 + foreignKeys.count, "an insert binds every parameter")
                statement.resetKeepingBindings()
                try statement.bind(.int(keys[index]), at: 1)
                try statement.bind(insert.values, count: entity.storedAttributeCount, from: 2)
                if !foreignKeys.isEmpty { try statement.bind(foreignKeys, from: Int32(entity.storedAttributeCount + 2)) }
                while try statement.step() {}
                if !entityLayout.storage.isEmpty { members += StoreWritePlanner.membersWrites(of: insert, entityLayout) }
            } catch {
                guard error.isUniqueConstraintViolation,
                    let (constraint, row) = try collidingRow(entity, Array(insert.values), connection)
                else {
                    throw Self.mapWriteError(error, insert.objectID)
                }
                let earlier = (0..<index).first { keys[$0] == row.primaryKey && inserts[$0].objectID.entity === entity }
                conflicts.uniquenessConflicts.append((index, constraint, earlier.map { .insert(index: $0) } ?? .row(row)))
            }
        }
    }

    /// Writes the members of to-many relationships, in full, for the side that stores them.
    private func writeMembers(_ writes: [MembersWrite], _ resolve: StoreKeyResolver, _ connection: SQLiteConnection) throws {
        for write in writes {
            try planner.memberStatements(write, resolve) { sql, values in try connection.cachedStatement(sql).run(values) }
        }
    }

    /// The first uniqueness constraint of `entity` that `values` collide with, and the row they
    /// collide with. A nil value never collides (SQLite treats NULLs in UNIQUE indexes as distinct).
    private func collidingRow(
        _ entity: EntityDescription, _ values: [AttributeValue],
        _ connection: SQLiteConnection
    ) throws -> (constraint: [String], row: RowSnapshot)? {
        let entityLayout = try layout.of(entity)
        for (constraint, sql, bound) in try planner.collisionQueries(entity, values) {
            let statement = try connection.cachedStatement(sql)
            defer { statement.reset() }
            try statement.bind(bound)
            if try statement.step() { return (constraint, try decodeRow(statement, entity, entityLayout)) }
        }
        return nil
    }

    /// Reserves `count` keys of `entity`'s sequence (its hierarchy's), for objects not saved yet
    /// (``ObjectContext/obtainPermanentIDs(for:)``): no later insert gets them, even after the
    /// process restarts, and a save that inserts an object under a reserved key writes that key.
    func reservePrimaryKeys(_ entity: EntityDescription, count: Int) throws(SkerryError) -> [Int64] {
        try checkWritable()
        guard count > 0 else { return [] }
        do {
            return try pool.write { connection in
                try connection.writeTransaction {
                    let first = try Self.nextPrimaryKey(entity, among: entities, connection)
                    try connection.cachedStatement(
                        "INSERT OR REPLACE INTO \(SQLBuilder.quote(Self.keysTable)) (\"entity\", \"next\") VALUES (?, ?)"
                    )
                    .run([.string(Self.keyRoot(entity, among: entities).name), .int(first + Int64(count))])
                    return Array(first..<(first + Int64(count)))
                }
            }
        } catch {
            throw Self.mapError(error, entity: entity)
        }
    }

    /// The entity whose name keys the sequence of `entity`'s keys: its topmost ancestor among
    /// `entities` (a store's entities), so that keys are unique in a hierarchy.
    static func keyRoot(_ entity: EntityDescription, among entities: [EntityDescription]) -> EntityDescription {
        StoreWritePlanner.keyRoot(entity, among: entities)
    }

    /// The next unused primary key of `entity`'s hierarchy among `entities`: past both the
    /// recorded sequence (kept under the hierarchy's root, ``keyRoot(_:among:)``) and the largest
    /// key in the hierarchy's tables. Runs inside the write transaction, so no other writer can
    /// interleave.
    static func nextPrimaryKey(
        _ entity: EntityDescription, among entities: [EntityDescription],
        _ connection: SQLiteConnection
    ) throws -> Int64 {
        let q = SQLBuilder.quote
        let root = keyRoot(entity, among: entities)
        let tables =
            root === entity && !entities.contains(where: { $0.superentity === entity })
            ? [entity]
            : entities.filter { $0.isKind(of: root) }
        let key = q(SQLBuilder.primaryKeyColumn)
        let keys =
            tables.count == 1
            ? q(tables[0].name)
            : "(" + tables.map { "SELECT \(key) FROM \(q($0.name))" }.joined(separator: " UNION ALL ") + ")"
        return try connection.scalarInt64(
            """
            SELECT max(coalesce((SELECT "next" FROM \(q(keysTable)) WHERE "entity" = ?), 1), \
            coalesce((SELECT max(\(key)) FROM \(keys)), 0) + 1)
            """, [.string(root.name)]) ?? 1
    }

    private static func mapWriteError(_ error: any Error, _ objectID: ObjectID) -> SkerryError {
        var mapped = mapError(error, entity: objectID.entity)
        if mapped.objectIDs.isEmpty { mapped.objectIDs = [objectID] }
        if mapped.code == .constraintViolation {
            mapped = SkerryError(
                .constraintViolation,
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

    func batchDeleteCount(_ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool) throws(SkerryError) -> Int
    {
        try batchDelete(entity, predicate: predicate, includesSubentities: includesSubentities, returningIDs: false).count
    }

    func batchDelete(_ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool) throws(SkerryError)
        -> [ObjectID]
    {
        try batchDelete(entity, predicate: predicate, includesSubentities: includesSubentities, returningIDs: true).objectIDs
    }

    /// Deletes the rows matching `predicate` — the entity's and, unless told otherwise, its
    /// sub-entities' (as Core Data's batch delete of a fetch that includes sub-entities), table by
    /// table, the predicate compiled for each — and clears what refers to them
    /// (``BatchDeleteCleanup``), in one transaction. The keys are selected first when IDs are
    /// asked for or something refers to the rows; otherwise one `DELETE` per table is all.
    private func batchDelete(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool, returningIDs: Bool
    ) throws(SkerryError) -> (count: Int, objectIDs: [ObjectID]) {
        try checkWritable()
        let q = SQLBuilder.quote
        let members = planner.batchDeleteTables(entity, includesSubentities: includesSubentities)
        let cleanup = BatchDeleteCleanup(deleting: members, among: entities, layout: layout)
        let selectsKeys = returningIDs || !cleanup.isEmpty || tracksPersistentHistory
        let statements = members.map { member in
            let query = StoreQuery(entity: member, predicate: predicate, sortKeys: [])
            // With history, the values it keeps of the deleted rows come with their keys, and so do
            // the objects their own foreign keys name (which lose them).
            let preserved = tracksPersistentHistory ? HistoryEntry.preservedAttributes(member) : []
            let held = tracksPersistentHistory ? planner.heldKeyReading(member, cleanup) : nil
            let columns = ([SQLBuilder.primaryKeyColumn] + preserved.map(\.name)).map(q) + (held?.expressions ?? [])
            return (
                entity: member, preserved: preserved, held: held,
                select: SQLBuilder.query(
                    "SELECT \(columns.joined(separator: ", ")) FROM \(q(member.name))", query, layout: layout, ordered: false),
                delete: SQLBuilder.query("DELETE FROM \(q(member.name))", query, layout: layout, ordered: false)
            )
        }
        let identity = identity
        return try writeConnection(entity) { connection in
            try checkRawConditions(predicate, connection)
            return try connection.writeTransaction {
                if checksHistoryTracking { try refuseIfHistoryTracked(connection) }
                var count = 0
                var objectIDs: [ObjectID] = []
                var keys: [Int64] = []
                var history: [HistoryEntry] = []
                var held: [HistoryEntry] = []
                for (member, preserved, reading, select, delete) in statements {
                    if selectsKeys {
                        let statement = try connection.cachedStatement(select.text)
                        try statement.bind(select.bindings)
                        while try statement.step() {
                            let key = statement.int64(at: 0)
                            keys.append(key)
                            if tracksPersistentHistory {
                                let tombstone = Self.tombstone(statement, preserved, from: 1)
                                history.append(HistoryEntry(type: .delete, entity: member, key: key, tombstone: tombstone))
                                if let reading {
                                    let first = 1 + preserved.count
                                    held += reading.updates { expression in
                                        let column = Int32(first + expression)
                                        return statement.isNull(at: column) ? nil : statement.int64(at: column)
                                    }
                                }
                            }
                            if returningIDs { objectIDs.append(ObjectID(store: identity, entity: member, primaryKey: key)) }
                        }
                    }
                    try connection.cachedStatement(delete.text).run(delete.bindings)
                    count += connection.changes
                }
                if !keys.isEmpty {
                    history += try clearReferences(
                        to: keys, cleanup, deleting: entity, recording: tracksPersistentHistory, held: held, connection)
                }
                try recordHistory(history, connection)
                return (count, objectIDs)
            }
        }
    }

    /// Clears what refers to the deleted `keys` (of `entity`'s hierarchy): join-table rows go,
    /// foreign keys (and the order of their ordered inverse) become NULL. Refuses when a required
    /// relationship of a row that stays holds one of them (the transaction then rolls back).
    ///
    /// When `recording` (the store records history), returns the objects that stay and lost a
    /// deleted object, as updates naming the relationships that lost it (one per object), as a
    /// save's clearing reports them (``StoreWritePlanner/danglingLinkDeletes(of:_:)``): the rows
    /// whose foreign keys became NULL, the objects whose to-many relationship kept in a join
    /// table lost a deleted object, and those the deleted rows' own foreign keys named (`held`,
    /// read with the rows: ``StoreWritePlanner/heldKeyReading(_:_:)``), so that a consumer
    /// merging the history does not keep a link to a deleted object.
    private func clearReferences(
        to keys: [Int64], _ cleanup: BatchDeleteCleanup, deleting entity: EntityDescription, recording: Bool,
        held: [HistoryEntry], _ connection: SQLiteConnection
    ) throws -> [HistoryEntry] {
        let q = SQLBuilder.quote
        let list = SQLBuilder.jsonKeys(keys)
        for foreignKey in cleanup.foreignKeys where foreignKey.isRequired {
            // The deleted rows are gone already: every row found stays.
            let count =
                try connection.scalarInt64(
                    "SELECT count(*) FROM \(q(foreignKey.table)) WHERE \(SQLBuilder.inKeys(foreignKey.column))", [list]) ?? 0
            if count > 0 { throw BatchDeleteCleanup.requiredRelationshipError(foreignKey, count: Int(count), deleting: entity) }
        }
        var cleared = held
        /// Reads the objects a statement is about to unlink (`links`), when recording.
        func read(_ links: StoreWritePlanner.ClearedLinks?) throws {
            guard recording, let links else { return }
            let select = try connection.cachedStatement(
                "SELECT \(links.returning) FROM \(q(links.table)) WHERE \(SQLBuilder.inKeys(links.column))")
            defer { select.reset() }
            try select.bind([list])
            while try select.step() {
                let entity = links.entity(code: links.hasCodes ? select.int64(at: 1) : nil, layout)
                cleared.append(HistoryEntry(type: .update, entity: entity, key: select.int64(at: 0), properties: [links.name]))
            }
        }
        for join in cleanup.joinColumns {
            try read(planner.clearedLinks(of: join))
            try connection.cachedStatement("DELETE FROM \(q(join.table)) WHERE \(SQLBuilder.inKeys(join.column))").run([list])
        }
        for foreignKey in cleanup.foreignKeys {
            try read(planner.clearedLinks(of: foreignKey))
            let columns = [foreignKey.column] + (foreignKey.orderColumn.map { [$0] } ?? [])
            try connection.cachedStatement(
                "UPDATE \(q(foreignKey.table)) SET \(columns.map { "\(q($0)) = NULL" }.joined(separator: ", ")) WHERE \(SQLBuilder.inKeys(foreignKey.column))"
            ).run([list])
        }
        // A join row may link two deleted objects: the one on the side that stays is gone too.
        let root = Self.keyRoot(entity, among: entities)
        let deleted = Set(keys)
        return HistoryEntry.unlinkedUpdates(cleared) { owner, key in
            deleted.contains(key) && Self.keyRoot(owner, among: entities) === root
        }
    }
}

/// Turns object IDs into keys: permanent IDs are keys; temporary ones name an insert of this
/// write, directly or through an alias. Shared by the stores of this package.
package struct StoreKeyResolver {
    let allocated: [ObjectID: Int64]
    let aliases: [ObjectID: ObjectID]

    package init(allocated: [ObjectID: Int64], aliases: [ObjectID: ObjectID]) {
        self.allocated = allocated
        self.aliases = aliases
    }

    /// The key of `objectID` (nil: `.null`), which relationship `relationship` of `source`
    /// names.
    /// - Throws: ``SkerryError/Code/relationshipViolation`` for a temporary ID that names no
    ///   object of the write (an object deleted before it was ever saved, or never saved in
    ///   this store): a link to it cannot be kept, and writing none would lose it silently.
    package func key(_ objectID: ObjectID?, of source: ObjectID, _ relationship: Int) throws(SkerryError) -> AttributeValue {
        guard var id = objectID else { return .null }
        for _ in 0..<8 where id.isTemporary {
            if let key = allocated[id] { return .int(key) }
            guard let alias = aliases[id] else { break }
            id = alias
        }
        guard !id.isTemporary else {
            let name = source.entity.relationships[relationship].name
            throw SkerryError(
                .relationshipViolation,
                "\(source) is related through '\(source.entityName).\(name)' to \(objectID!), an object that was never saved and is not saved now (it was deleted before its first save, or belongs to another context). Nothing was saved; remove it from the relationship.",
                entityName: source.entityName, key: name, objectID: source, objectIDs: [objectID!])
        }
        return .int(id.key)
    }
}
