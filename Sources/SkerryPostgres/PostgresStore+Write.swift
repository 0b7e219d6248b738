import SkerryCore

extension PostgresStore {
    /// With history, the write's record (its number, under the store's history lock) is the
    /// ``SkerryCore/StoreWriteFinish`` it hands `next`: run after the statements of every store of
    /// the save, as the last thing before the commit (see ``recordHistory(_:_:)``).
    ///
    /// With `resolve`, conflicts are resolved inside the transaction: the rows the write updates
    /// or deletes are locked before its statements run (and stay locked when an attempt's
    /// statements are undone), so the rows the conflicts read cannot change again before the
    /// next attempt writes them.
    func write<T>(_ changes: StoreWrite, resolving resolve: StoreWriteResolver?, then next: (StoreWriteFinish?) throws -> T) throws
        -> (insertedKeys: [Int64], next: T)
    {
        try checkWritable()
        var attempt = 1
        // The write `resolve` last returned: a transaction the server ended is written again
        // from it, since the save's plan was resolved to it.
        var latest = changes
        let resolving = resolve.map { resolve in
            { (found: StoreWriteConflicts) throws -> StoreWrite in
                latest = try resolve(found)
                return latest
            }
        }
        while true {
            var nextStarted = false
            do {
                return try pool.withConnection { connection in
                    try connection.transactionBegunInPipeline {
                        try writeTransaction(latest, connection, begins: true, resolving: resolving) { finish in
                            nextStarted = true
                            return try next(finish)
                        }
                    }
                }
            } catch let conflicts as StoreWriteConflicts {
                throw conflicts // for the context's merge policy, untouched
            } catch is LocksOutOfOrder {
                // Rolled back before it locked any row out of order: begun again from the
                // resolved write. (Each time follows a resolution, which the save bounds.)
                continue
            } catch {
                let mapped = Self.mapError(error, entity: nil)
                // The server ended the transaction to break a deadlock or a serialization
                // conflict with another writer, before anything of the save was kept (the next
                // store's write had not begun): the whole transaction is written again, as
                // PostgreSQL advises for these two codes. (The history's record runs within
                // `next`, and is not tried again: it waits only for the history lock, whose
                // holders wait for nothing, so it takes part in no deadlock.)
                if !nextStarted, attempt < Self.writeAttempts, let code = mapped.postgres?.sqlState,
                    code == .deadlockDetected || code == .serializationFailure
                {
                    attempt += 1
                    writesRetried.add(1, ordering: .relaxed)
                    continue
                }
                throw mapped
            }
        }
    }

    /// Writes the rows of another store, as ``SkerryCore/ObjectStore/importWrites(_:keyFloors:)``
    /// describes: each write `next` returns, pipelined as a save's statements are, in one
    /// transaction, without history or change records. The inserts keep their keys (permanent
    /// IDs); at the end each hierarchy's key sequence restarts past its largest key and at or
    /// past the copied store's sequence (`keyFloors`), in the transaction, with `ALTER SEQUENCE
    /// … RESTART WITH` (transactional since PostgreSQL 10, unlike `setval`, which is never rolled
    /// back), so a failed copy leaves every sequence where it was, and the sequence keeps its
    /// owner and its grants (a role that only inserts still may take keys from it).
    func importWrites(_ next: () throws -> StoreWrite?, keyFloors: () throws -> [String: Int64]) throws {
        try checkWritable()
        do {
            try pool.withConnection { connection in
                try connection.transaction {
                    while let changes = try next() {
                        _ = try writeTransaction(changes, connection, importing: true) { _ in () }
                    }
                    try restartKeySequences(connection, floors: keyFloors())
                }
            }
        } catch let conflicts as StoreWriteConflicts {
            throw conflicts
        } catch {
            throw Self.mapError(error, entity: nil)
        }
    }

    /// Restarts each hierarchy's key sequence past the largest key of its tables and at or past
    /// the largest of `floors` of its entities (by entity name), where the sequence would hand
    /// out a key below that.
    private func restartKeySequences(_ connection: PostgresConnection, floors: [String: Int64]) throws {
        let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
        for root in entities where StoreWritePlanner.keyRoot(root, among: entities) === root {
            let tables = entities.filter { StoreWritePlanner.keyRoot($0, among: entities) === root }
            let largest = tables.map { "(SELECT COALESCE(max(\(pk)), 0) FROM \(q($0.name)))" }.joined(separator: ", ")
            let sequence = q(Self.sequenceName(root.name))
            let result = try connection.query(
                "SELECT GREATEST(\(largest)), CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM \(sequence)")
            let floor = tables.compactMap { floors[$0.name] }.max() ?? 1
            let wanted = max(result.int64(0, 0) + 1, floor)
            guard wanted > result.int64(0, 1) else { continue }
            try connection.execute("ALTER SEQUENCE \(sequence) RESTART WITH \(wanted)")
        }
    }

    /// How many times a write is tried when the server ends it to break a deadlock or a
    /// serialization conflict (``write(_:resolving:then:)``). Locking every changed row first, in one
    /// order, keeps saves from deadlocking on the rows they change; what remains (a batch delete's
    /// scan order, unique-index waits) is rare and retried.
    static let writeAttempts = 4

    /// One statement of a write, kept to learn what its answer means.
    private enum Sent {
        /// A version-checked update or delete of `objectID`: no row changed means a conflict.
        case checked(ObjectID)
        /// An insert (its position in `StoreWrite.inserts`): no row inserted means a uniqueness conflict.
        case insert(Int)
        /// A statement whose answer needs no look (join-table rows, order columns).
        case other(ObjectID?)
        /// A delete of `objectID` without a version check, in a store that records history: no
        /// row deleted means someone else deleted it (and recorded it).
        case delete(ObjectID)

        var objectID: ObjectID? {
            switch self {
            case .checked(let id): return id
            case .insert: return nil
            case .other(let id): return id
            case .delete(let id): return id
            }
        }
    }

    /// Sends one statement of a write: its SQL, what its answer means, and its parameters,
    /// written straight into the connection's buffer.
    private typealias Send = (_ sql: String, _ kind: Sent, _ encode: (inout ParameterWriter) throws -> Void) throws -> Void
    /// Sends one statement whose answer's rows `onResult` reads (a delete returning a tombstone).
    private typealias SendReturning = (
        _ sql: String, _ kind: Sent, _ onResult: @escaping (PostgresResult) throws -> Void,
        _ encode: (inout ParameterWriter) throws -> Void
    ) throws -> Void

    /// The write, inside its transaction: keys first (one statement per entity), then the locks of
    /// the rows it changes, every delete, update, insert and to-many member write in one pipeline — deletes first, so that a
    /// save that deletes a row and inserts another with the same unique value does not trip over
    /// its own old row. Then the rows behind conflicts are read, and the write fails with them
    /// (rolled back) or runs `next` before it commits, handing it the history's record.
    ///
    /// When `begins`, the write begins its transaction itself (``PostgresConnection/beginWriteSQL``,
    /// first in the pipeline: no round trip of its own), after the keys: a sequence hands out
    /// keys outside any transaction anyway (`nextval` is never rolled back). A save without
    /// inserts then waits twice (its pipeline, then the `COMMIT`), with inserts three times.
    ///
    /// With `resolve`, the rows are locked before a savepoint, and an attempt that finds conflicts
    /// goes back to it (keeping the locks), resolves them and writes what `resolve` returns in
    /// the same transaction (its `BEGIN` and tracking check are not sent again).
    private func writeTransaction<T>(
        _ changes: StoreWrite, _ connection: PostgresConnection, importing: Bool = false, begins: Bool = false,
        resolving resolve: StoreWriteResolver? = nil, then next: (StoreWriteFinish?) throws -> T
    ) throws -> (insertedKeys: [Int64], next: T) {
        var changes = changes, first = true
        // The rows the transaction's attempts locked so far, by table (nil: none ran yet).
        var locked: [String: Set<Int64>]?
        while true {
            switch try writeAttempt(
                changes, connection, importing: importing, begins: begins && first, checksTracking: first, resolves: resolve != nil,
                locked: &locked)
            {
            case .written(let keys, let finish):
                return (keys, try next(finish))
            case .conflicts(let conflicts):
                guard let resolve else { throw conflicts }
                try connection.execute("ROLLBACK TO SAVEPOINT \(Self.attemptSavepoint)")
                changes = try resolve(conflicts)
                first = false
            }
        }
    }

    /// The savepoint of each attempt of a write that resolves its conflicts in its transaction.
    private static let attemptSavepoint = "skerry_write_attempt"

    /// Thrown by an attempt after the first whose write changes rows the transaction did not lock
    /// (a resolved uniqueness conflict: an insert become an update of the row with its value):
    /// locking them now, after rows later in lock order, could wait for a save that holds one of
    /// them and waits for a row this transaction holds (a deadlock). The transaction is rolled
    /// back instead, and the write begun again from the resolved write, locking every row in
    /// order (``write(_:resolving:then:)``).
    private struct LocksOutOfOrder: Error {}

    /// What one attempt of a write did.
    private enum AttemptOutcome {
        /// Its statements ran without conflict; `finish` records the history.
        case written(keys: [Int64], finish: StoreWriteFinish?)
        /// Its statements found conflicts (and the transaction is still open).
        case conflicts(StoreWriteConflicts)
    }

    /// One attempt of ``writeTransaction(_:_:importing:begins:resolving:then:)``: its statements,
    /// in one pipeline, and what they found. `checksTracking`: the attempt is the transaction's
    /// first (it checks that history tracking is off); `resolves`: it locks every row it updates
    /// or deletes first, then sets the savepoint a conflict goes back to. `locked`: the rows the
    /// earlier attempts locked, to which this one's are added; an attempt after the first that
    /// changes another row throws ``LocksOutOfOrder`` before it sends anything.
    private func writeAttempt(
        _ changes: StoreWrite, _ connection: PostgresConnection, importing: Bool, begins: Bool, checksTracking: Bool,
        resolves: Bool, locked: inout [String: Set<Int64>]?
    ) throws -> AttemptOutcome {
        // Rows are written in lock order (``lockOrder(_:_:)``), sorted once here.
        let deletes = changes.deletes.sorted { Self.lockOrder($0.objectID, $1.objectID) }
        let updates = changes.updates.sorted { Self.lockOrder($0.objectID, $1.objectID) }
        let members = try membersWrites(updates, changes.inserts)
        let locks = try lockedRows(deletes, updates, changes.inserts, members, always: resolves)
        if let held = locked {
            guard locks.allSatisfy({ table, keys in held[table].map(keys.isSubset(of:)) ?? keys.isEmpty }) else {
                throw LocksOutOfOrder()
            }
        } else {
            locked = locks
        }
        let keys = try allocateKeys(changes.inserts, connection)
        let resolve = StoreWritePlanner.keyResolver(changes, keys: keys)
        var sent: [Sent] = []
        sent.reserveCapacity(changes.deletes.count + changes.updates.count + changes.inserts.count)
        let pipeline = PostgresPipeline(connection)
        func send(_ sql: String, _ kind: Sent, _ encode: (inout ParameterWriter) throws -> Void) throws {
            sent.append(kind)
            switch kind {
            case .checked, .insert, .delete: try pipeline.send(sql, expectingRows: true, encode: encode)
            case .other: try pipeline.send(sql, encode: encode)
            }
        }
        func sendReturning(
            _ sql: String, _ kind: Sent, _ onResult: @escaping (PostgresResult) throws -> Void,
            _ encode: (inout ParameterWriter) throws -> Void
        ) throws {
            sent.append(kind)
            try pipeline.send(sql, expectingRows: true, onResult: onResult, encode: encode)
        }
        // With history: the preserved values of the rows the deletes removed, by object.
        let tombstones = TombstoneBox()
        // With history or change propagation: the objects whose links to deleted rows the deletes
        // clear (read from the statements that clear them). The change record then waits for the
        // answers (a statement after the pipeline); nil when no delete can clear any.
        let unlinked =
            (tracksPersistentHistory || options.propagatesChanges)
                && changes.deletes.contains { planner.hasDanglingLinks($0.objectID.entity) } ? UnlinkedBox() : nil
        do {
            if begins { try send(PostgresConnection.beginWriteSQL, .other(nil)) { _ in } }
            // First: it waits for nothing but an instance turning tracking on (no row held), and
            // when tracking is on, the server skips the write's statements.
            if checksHistoryTracking && checksTracking { try sendTrackingCheck { sql in try send(sql, .other(nil)) { _ in } } }
            try sendLocks(locks, send)
            if resolves { try send("SAVEPOINT \(Self.attemptSavepoint)", .other(nil)) { _ in } }
            try sendDeletes(deletes, send, sendReturning, tracksPersistentHistory ? tombstones : nil, unlinked)
            try sendUpdates(updates, resolve, send)
            try sendInserts(changes.inserts, keys: keys, resolve, send)
            try sendMembers(members, resolve, send)
            if unlinked == nil, options.propagatesChanges, !importing,
                let bindings = changeBindings(PostgresChangeRecord(changes, insertedKeys: keys))
            {
                try send(Self.recordChangesSQL, .other(nil)) { for value in bindings { try $0.append(value) } }
            }
            try pipeline.finish()
        } catch {
            // An error thrown between statements (the write's own checks) leaves answers due:
            // they are read and discarded so that the connection leaves pipeline mode and rolls
            // back (a statement the pipeline refused itself was drained already, and this does
            // nothing); the first error is the one to report, not one reading the rest.
            try? pipeline.finish()
            if let refusal = trackingRefusal(error) { throw refusal }
            let objectID = pipeline.failedStatement.flatMap { $0 < sent.count ? sent[$0] : nil }.flatMap { kind -> ObjectID? in
                if case .insert(let index) = kind { return changes.inserts[index].objectID }
                return kind.objectID
            }
            throw Self.mapWriteError(error, objectID)
        }
        var conflicts = StoreWriteConflicts()
        // Deletes of rows already gone (deleted, and recorded, by someone else).
        var gone: Set<ObjectID> = []
        // The deleted objects, made once if a version-checked statement changed no row.
        var deleting: Set<ObjectID>?
        for position in pipeline.unchanged {
            switch sent[position] {
            case .delete(let objectID):
                gone.insert(objectID)
            case .checked(let objectID):
                let stored = try currentRow(objectID, connection)
                // A delete of a row already gone is no conflict: the delete's aim is met.
                if stored == nil {
                    let deleted = deleting ?? Set(changes.deletes.lazy.map(\.objectID))
                    deleting = deleted
                    if deleted.contains(objectID) {
                        gone.insert(objectID)
                        continue
                    }
                }
                conflicts.versionConflicts.append((objectID, stored))
            case .insert(let index):
                let insert = changes.inserts[index]
                guard let (constraint, row) = try collidingRow(insert.objectID.entity, Array(insert.values), connection) else {
                    throw SkerryError(
                        .constraintViolation,
                        "Saving \(insert.objectID) would violate a uniqueness constraint of '\(insert.objectID.entityName)'.",
                        entityName: insert.objectID.entityName, objectID: insert.objectID)
                }
                let entity = insert.objectID.entity
                let earlier = (0..<index).first { keys[$0] == row.primaryKey && changes.inserts[$0].objectID.entity === entity }
                conflicts.uniquenessConflicts.append((index, constraint, earlier.map { .insert(index: $0) } ?? .row(row)))
            case .other:
                continue
            }
        }
        if !conflicts.isEmpty {
            conflicts.store = identity
            return .conflicts(conflicts)
        }
        let unlinkedUpdates = unlinked.map { HistoryEntry.unlinkedUpdates($0.entries, of: changes) } ?? []
        if unlinked != nil, options.propagatesChanges, !importing {
            var record = PostgresChangeRecord(changes, insertedKeys: keys)
            for update in unlinkedUpdates { record.updated[update.entity.name, default: []].append(update.key) }
            if let bindings = changeBindings(record) { try connection.query(Self.recordChangesSQL, bindings) }
        }
        var finish: StoreWriteFinish?
        if tracksPersistentHistory && !importing {
            let deleted = changes.deletes.lazy.filter { !gone.contains($0.objectID) }.map {
                HistoryEntry(
                    type: .delete, entity: $0.objectID.entity, key: $0.objectID.key, tombstone: tombstones.values[$0.objectID])
            }
            let entries = HistoryEntry.entries(of: changes, keys: keys, deleted: Array(deleted), unlinked: unlinkedUpdates)
            if !entries.isEmpty {
                // Run by the save once every store's statements ran, before this transaction
                // commits (`next` returns only after it ran, or throws).
                finish = StoreWriteFinish(order: identity.identifier) { [self] in
                    do { try recordHistory(entries, connection) } catch { throw Self.mapError(error, entity: nil) }
                }
            }
        }
        return .written(keys: keys, finish: finish)
    }

    /// The tombstones the deletes of a write return, filled as their answers are read.
    private final class TombstoneBox {
        var values: [ObjectID: [(name: String, value: AttributeValue)]] = [:]
    }

    /// The objects whose links to deleted rows a write cleared, one entry per object and
    /// relationship, filled as the answers of the statements that clear them are read.
    private final class UnlinkedBox {
        var entries: [HistoryEntry] = []
    }

    /// The next keys of each hierarchy's sequence (an entity's own when it has no parent in the
    /// store), one per insert: one statement per hierarchy. Sequences never hand out a key twice,
    /// whichever process asks, so keys are unique in a hierarchy. An insert whose ID is already
    /// permanent keeps its key (reserved earlier by ``reservePrimaryKeys(_:count:)``).
    private func allocateKeys(_ inserts: [RowInsert], _ connection: PostgresConnection) throws -> [Int64] {
        guard !inserts.isEmpty else { return [] }
        var roots: [ObjectIdentifier: EntityDescription] = [:] // by entity
        var counts: [ObjectIdentifier: (root: EntityDescription, count: Int)] = [:] // by root
        for insert in inserts where insert.objectID.isTemporary {
            let entity = insert.objectID.entity
            let root = roots[ObjectIdentifier(entity)] ?? StoreWritePlanner.keyRoot(entity, among: entities)
            roots[ObjectIdentifier(entity)] = root
            counts[ObjectIdentifier(root), default: (root, 0)].count += 1
        }
        // The key statement and the inserts' statements, not prepared yet on a new connection,
        // are prepared together first (one round trip, where each would take one).
        var insertEntities: [EntityDescription] = []
        for insert in inserts where insertEntities.last !== insert.objectID.entity {
            if !insertEntities.contains(where: { $0 === insert.objectID.entity }) { insertEntities.append(insert.objectID.entity) }
        }
        try connection.prepareAhead((counts.isEmpty ? [] : [Self.nextKeysSQL]) + insertEntities.map { try insertSQL($0) })
        var allocated: [ObjectIdentifier: [Int64]] = [:]
        for (id, (root, count)) in counts {
            allocated[id] = try Self.nextKeys(root, count: count, connection).reversed()
        }
        return inserts.map {
            $0.objectID.isTemporary
                ? allocated[ObjectIdentifier(roots[ObjectIdentifier($0.objectID.entity)]!)]!.removeLast() : $0.objectID.key
        }
    }

    /// `count` keys of the sequence of the hierarchy whose root is `root`, in one statement.
    private static func nextKeys(_ root: EntityDescription, count: Int, _ connection: PostgresConnection) throws -> [Int64] {
        let result = try connection.query(nextKeysSQL, [.string(SQLBuilder.quote(sequenceName(root.name))), .int(Int64(count))])
        return (0..<result.rowCount).map { result.int64($0, 0) }
    }

    /// The statement of ``nextKeys(_:count:_:)``: the next keys of a sequence, named by its first
    /// parameter, as many as its second.
    private static let nextKeysSQL = "SELECT nextval(?::regclass) FROM generate_series(1, ?::integer)"

    /// The statement that inserts a row of `entity` (``sendInserts(_:keys:_:_:)``): without a
    /// row when it would break a uniqueness constraint of the entity.
    private func insertSQL(_ entity: EntityDescription) throws -> String {
        try layout.of(entity).insertRow + (entity.uniquenessConstraints.isEmpty ? "" : " ON CONFLICT DO NOTHING")
    }

    /// The keys of `entity`'s own rows greater than `key`, in order, at most `limit`
    /// (``SkerryCore/ObjectStore/fetchKeys(_:after:limit:)``): a range of the primary key index.
    func fetchKeys(_ entity: EntityDescription, after key: Int64, limit: Int) throws(SkerryError) -> [Int64] {
        try withConnection(entity) { connection in
            let pk = SQLBuilder.quote(SQLBuilder.primaryKeyColumn)
            let result = try connection.query(
                "SELECT \(pk) FROM \(SQLBuilder.quote(entity.name)) WHERE \(pk) > ? ORDER BY \(pk) LIMIT ?",
                [.int(key), .int(Int64(limit))])
            return (0..<result.rowCount).map { result.int64($0, 0) }
        }
    }

    /// The next key of each entity's sequence (its hierarchy's), by entity name
    /// (``SkerryCore/ObjectStore/nextPrimaryKeys()``): what `nextval` would hand out.
    func nextPrimaryKeys() throws(SkerryError) -> [String: Int64] {
        try withConnection(nil) { connection in
            var keys: [String: Int64] = [:]
            for root in entities where StoreWritePlanner.keyRoot(root, among: entities) === root {
                let result = try connection.query(
                    "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM \(SQLBuilder.quote(Self.sequenceName(root.name)))"
                )
                for entity in entities where StoreWritePlanner.keyRoot(entity, among: entities) === root {
                    keys[entity.name] = result.int64(0, 0)
                }
            }
            return keys
        }
    }

    /// Reserves `count` keys of `entity`'s sequence (its hierarchy's) for objects not saved yet
    /// (``SkerryCore/ObjectContext/obtainPermanentIDs(for:)``): the sequence never hands them out
    /// again, in any process, and a save that inserts an object under a reserved key writes that key.
    func reservePrimaryKeys(_ entity: EntityDescription, count: Int) throws(SkerryError) -> [Int64] {
        guard count > 0 else { return [] }
        let root = StoreWritePlanner.keyRoot(entity, among: entities)
        return try withConnection(entity) { connection in try Self.nextKeys(root, count: count, connection) }
    }

    /// The row with this key as it is now, or nil.
    private func currentRow(_ objectID: ObjectID, _ connection: PostgresConnection) throws -> RowSnapshot? {
        let entityLayout = try layout.of(objectID.entity)
        let result = try connection.query(
            entityLayout.selectRows + " WHERE \(SQLBuilder.quote(SQLBuilder.primaryKeyColumn)) = ?",
            [.int(objectID.key)])
        return result.rowCount > 0 ? try decodeRow(result, 0, objectID.entity, entityLayout) : nil
    }

    /// Locks every stored row the write changes (deleted and updated rows, and the rows whose
    /// order column it rewrites) before any other statement, table by table in name order and by
    /// key within a table: two saves that change some of the same rows take their locks in one
    /// order, so neither can hold a row the other waits for while it waits for one the other
    /// holds (a deadlock, which the server would end by failing one of them). Any two saves that
    /// write one join-table row hold the lock of one of its objects in common, so the later one
    /// waits for it here, before it writes any row. A row is written only by a save that holds
    /// the lock of its source (the table's owner), or, when the side that does not own the table
    /// is ordered (each side then writes the rows of its own list, with its own order:
    /// ``SkerryCore/StoreWritePlanner/isWrittenByBothSides(_:)``), by one that holds the locks
    /// of both of its objects: such a write locks its members (the rows' other ends) too, and a
    /// link a save adds or removes changes both objects' lists, so both are in the save. A
    /// delete removes its object's rows under that object's lock, which every other writer of
    /// those rows holds. Rows already gone lock nothing; the version-checked statements after
    /// report them as conflicts.
    ///
    /// Nothing is sent (``lockedRows(_:_:_:_:always:)`` gives no row) when the write's own
    /// statements already take their locks in that order and wait for nothing else between
    /// them: when it changes no join-table row or order column,
    /// writes no entity with uniqueness constraints, and its deletes then its updates (each sorted
    /// in lock order) are one increasing sequence, as in a save that only updates, or only
    /// deletes, rows without many-to-many relationships or unique values. Each statement then
    /// locks its one row, in lock order, which is what the locking statement would have done
    /// first (a round trip and a second pass over every row saved). Uniqueness rules this out:
    /// a statement writing a unique value can wait for another transaction's uncommitted value
    /// (or its hierarchy's uniqueness lock) while holding the rows locked before it, and two such
    /// saves can then wait for each other; with every row locked first, neither waits for a value
    /// while holding a row the other needs. With `always` (a write that resolves its conflicts in
    /// its transaction), the rows are locked anyway, before the savepoint its conflicts go back to;
    /// its later attempts lock no other row (``LocksOutOfOrder``).
    private func sendLocks(_ rows: [String: Set<Int64>], _ send: Send) throws {
        let q = SQLBuilder.quote
        let key = q(SQLBuilder.primaryKeyColumn)
        for table in rows.keys.sorted() {
            try send(
                "SELECT 1 FROM \(q(table)) WHERE \(Self.inKeys(SQLBuilder.primaryKeyColumn)) ORDER BY \(key) FOR UPDATE", .other(nil)
            ) { try $0.append(keys: rows[table]!.sorted()) }
        }
    }

    /// The rows ``sendLocks(_:_:)`` locks for a write, by table: empty when the write's own
    /// statements take their locks in order (see there), unless `always`.
    private func lockedRows(
        _ deletes: [(objectID: ObjectID, expectedVersion: Int64?)], _ updates: [RowUpdate], _ inserts: [RowInsert],
        _ members: [MembersWrite], always: Bool
    ) throws -> [String: Set<Int64>] {
        let writesUniqueValues =
            deletes.contains { !$0.objectID.entity.uniquenessConstraints.isEmpty }
            || updates.contains { !$0.objectID.entity.uniquenessConstraints.isEmpty }
            || inserts.contains { !$0.objectID.entity.uniquenessConstraints.isEmpty }
        if !always, members.isEmpty, !writesUniqueValues, try !deletes.contains(where: { try hasJoinTables($0.objectID.entity) }) {
            guard let lastDelete = deletes.last, let firstUpdate = updates.first else { return [:] }
            if Self.lockOrder(lastDelete.objectID, firstUpdate.objectID) { return [:] }
        }
        var keys: [String: Set<Int64>] = [:]
        for (objectID, _) in deletes { keys[objectID.entityName, default: []].insert(objectID.key) }
        for update in updates { keys[update.objectID.entityName, default: []].insert(update.objectID.key) }
        for write in members {
            // The members whose rows (an order column, or the join rows both sides write) other
            // saves may write holding only the members' locks.
            switch write.storage {
            case .inverseForeignKey(_, _, _?): break
            case .joinTable where planner.isWrittenByBothSides(write.storage): break
            default: continue
            }
            // Each member's own table: the destination's, or a sub-entity's.
            for member in write.members where !member.isTemporary { keys[member.entityName, default: []].insert(member.key) }
        }
        return keys
    }

    /// Whether rows of `entity` take part in join tables (whose rows a delete of theirs deletes).
    private func hasJoinTables(_ entity: EntityDescription) throws -> Bool {
        try layout.of(entity).storage.contains {
            if case .joinTable = $0 { return true }
            return false
        }
    }

    /// The to-many members this write stores on the side of their source: those of updated rows
    /// (in lock order), then those of inserted rows.
    private func membersWrites(_ updates: [RowUpdate], _ inserts: [RowInsert]) throws -> [MembersWrite] {
        var members: [MembersWrite] = []
        for update in updates where !update.relationshipChanges.isEmpty {
            members += StoreWritePlanner.membersWrites(update.objectID, try layout.of(update.objectID.entity), update.relationshipChanges)
        }
        // The layout of consecutive inserts of one entity is looked up once; entities without
        // to-many storage are skipped.
        var lastEntity: EntityDescription?
        var entityLayout: SQLiteEntityLayout?
        for insert in inserts {
            let entity = insert.objectID.entity
            if entity !== lastEntity {
                lastEntity = entity
                let found = try layout.of(entity)
                entityLayout = found.storage.isEmpty ? nil : found
            }
            guard let entityLayout else { continue }
            members += StoreWritePlanner.membersWrites(of: insert, entityLayout)
        }
        return members
    }

    private typealias MembersWrite = StoreWritePlanner.MembersWrite

    /// Deletes rows (sorted in lock order, so that concurrent writers lock rows in one order), and
    /// the join-table rows they take part in. With `tombstones` (a store that records history),
    /// every delete tells whether it deleted its row, and returns the values its tombstone keeps.
    /// With `unlinked`, the statements that clear links to the deleted rows that no delete rule
    /// reaches return the objects that held them.
    private func sendDeletes(
        _ deletes: [(objectID: ObjectID, expectedVersion: Int64?)], _ send: Send, _ sendReturning: SendReturning,
        _ tombstones: TombstoneBox?, _ unlinked: UnlinkedBox?
    ) throws {
        // The statement of consecutive deletes of one entity is made once.
        var lastEntity: EntityDescription?
        var lastChecked = false
        var sql = ""
        var joins = false
        var preserved: [AttributeDescription]?
        for (objectID, expectedVersion) in deletes {
            let entity = objectID.entity
            if entity !== lastEntity || lastChecked != (expectedVersion != nil) {
                lastEntity = entity
                lastChecked = expectedVersion != nil
                sql = SQLBuilder.deleteRow(entity, checkingVersion: lastChecked)
                joins = try hasJoinTables(entity) || planner.hasDanglingLinks(entity)
                preserved = nil
                if tombstones != nil, let returning = Self.returningTombstone(entity) {
                    sql += returning.sql
                    preserved = returning.attributes
                }
            }
            let kind: Sent = expectedVersion != nil ? .checked(objectID) : tombstones != nil ? .delete(objectID) : .other(objectID)
            func encode(_ writer: inout ParameterWriter) throws {
                try writer.append(.int(objectID.key))
                if let expectedVersion { try writer.append(.int(expectedVersion)) }
            }
            if let tombstones, let preserved {
                try sendReturning(
                    sql, kind,
                    { result in
                        if result.rowCount > 0 { tombstones.values[objectID] = Self.tombstone(result, 0, preserved, from: 0) }
                    }, encode)
            } else {
                try send(sql, kind, encode)
            }
            guard joins else { continue }
            try planner.joinRowDeletes(of: objectID) { sql, values in
                try send(sql, .other(objectID)) { for value in values { try $0.append(value) } }
            }
            try planner.danglingLinkDeletes(of: objectID) { sql, values, links in
                guard let unlinked, let links else {
                    try send(sql, .other(objectID)) { for value in values { try $0.append(value) } }
                    return
                }
                let layout = layout
                try sendReturning(
                    sql + " RETURNING " + links.returning, .other(objectID),
                    { result in
                        for row in 0..<result.rowCount {
                            let entity = links.entity(code: links.hasCodes ? result.int64(row, 1) : nil, layout)
                            unlinked.entries.append(
                                HistoryEntry(type: .update, entity: entity, key: result.int64(row, 0), properties: [links.name]))
                        }
                    }
                ) { for value in values { try $0.append(value) } }
            }
        }
    }

    /// Updates the changed columns of rows (sorted in lock order) whose version is still the one
    /// read. The values are written in the order of ``StoreWritePlanner/plan(_:_:)``'s: changed
    /// stored attributes, changed foreign keys, then key and expected version.
    private func sendUpdates(_ updates: [RowUpdate], _ resolve: StoreKeyResolver, _ send: Send) throws {
        // The statement of consecutive updates of the same columns is made once: a bulk update
        // changes the same attributes of every object.
        var shape: StoreWritePlanner.UpdateShape?
        var sql = ""
        var lastEntity: EntityDescription?
        var storage: [RelationshipStorage] = []
        for update in updates {
            let entity = update.objectID.entity
            if entity !== lastEntity {
                lastEntity = entity
                storage = try layout.of(entity).storage
            }
            let stored = entity.storedAttributeCount
            func isForeignKey(_ index: Int) -> Bool {
                if case .foreignKey = storage[index] { return true }
                return false
            }
            if shape == nil || !Self.update(update, hasShape: shape!, stored: stored, isForeignKey) {
                let made = try planner.plan(update, resolve).shape
                shape = made
                sql = made.sql
            }
            try send(sql, .checked(update.objectID)) { writer in
                for change in update.changes where change.index < stored { try writer.append(change.value) }
                for change in update.relationshipChanges where isForeignKey(change.index) {
                    try writer.append(try resolve.key(Self.relatedID(change.value), of: update.objectID, change.index))
                }
                try writer.append(.int(update.objectID.key))
                try writer.append(.int(update.expectedVersion))
            }
        }
    }

    /// Whether `update` changes the columns of `shape` (without making its shape).
    private static func update(
        _ update: RowUpdate, hasShape shape: StoreWritePlanner.UpdateShape, stored: Int, _ isForeignKey: (Int) -> Bool
    ) -> Bool {
        guard shape.entity === update.objectID.entity else { return false }
        var attributes = shape.attributes.makeIterator()
        for change in update.changes where change.index < stored {
            guard attributes.next() == change.index else { return false }
        }
        guard attributes.next() == nil else { return false }
        var relationships = shape.relationships.makeIterator()
        for change in update.relationshipChanges where isForeignKey(change.index) {
            guard relationships.next() == change.index else { return false }
        }
        return relationships.next() == nil
    }

    /// The first related ID of a relationship value (the destination of a to-one).
    private static func relatedID(_ value: RelationshipValue) -> ObjectID? {
        switch value {
        case .notLoaded: return nil
        case .toOne(let id): return id
        case .toMany(let ids): return ids.first
        }
    }

    /// Inserts rows under their allocated keys; an insert that collides with a uniqueness
    /// constraint inserts nothing (`ON CONFLICT DO NOTHING`, so that the transaction goes on) and
    /// is reported as a conflict with the row it collides with.
    private func sendInserts(_ inserts: [RowInsert], keys: [Int64], _ resolve: StoreKeyResolver, _ send: Send) throws {
        // What consecutive inserts of one entity share is worked out once.
        var lastEntity: EntityDescription?
        var sql = ""
        var foreignKeys: [Int] = []
        var stored = 0
        var types: [AttributeType] = []
        var checksUniqueness = false
        for (index, insert) in inserts.enumerated() {
            let entity = insert.objectID.entity
            if entity !== lastEntity {
                lastEntity = entity
                let entityLayout = try layout.of(entity)
                checksUniqueness = !entity.uniquenessConstraints.isEmpty
                sql = try insertSQL(entity)
                foreignKeys = entityLayout.foreignKeyIndexes
                stored = entity.storedAttributeCount
                types = entity.attributeTypes
            }
            // The values in the order of `insertRow`: key, stored attributes, foreign keys.
            try send(sql, checksUniqueness ? .insert(index) : .other(insert.objectID)) { writer in
                try writer.append(.int(keys[index]))
                // Each value read from the object's storage as it is written.
                for index in 0..<stored { try writer.append(insert.values, at: index, type: types[index]) }
                for relationship in foreignKeys {
                    try writer.append(
                        try resolve.key(Self.relatedID(insert.relationships[relationship]), of: insert.objectID, relationship))
                }
            }
        }
    }

    /// Writes the members of to-many relationships, in full, for the side that stores them.
    private func sendMembers(_ writes: [MembersWrite], _ resolve: StoreKeyResolver, _ send: Send) throws {
        for write in writes {
            try planner.memberStatements(write, resolve) { sql, values in
                try send(sql, .other(write.source)) { for value in values { try $0.append(value) } }
            }
        }
    }

    /// The first uniqueness constraint of `entity` that `values` collide with, and the row they
    /// collide with.
    private func collidingRow(
        _ entity: EntityDescription, _ values: [AttributeValue],
        _ connection: PostgresConnection
    ) throws -> (constraint: [String], row: RowSnapshot)? {
        let entityLayout = try layout.of(entity)
        for (constraint, sql, bound) in try planner.collisionQueries(entity, values) {
            let result = try connection.query(sql, bound)
            if result.rowCount > 0 { return (constraint, try decodeRow(result, 0, entity, entityLayout)) }
        }
        return nil
    }

    /// The order in which a write sends its statements about rows: by entity name, then key, the
    /// order in which ``sendLocks(_:_:)`` locked them.
    private static func lockOrder(_ a: ObjectID, _ b: ObjectID) -> Bool {
        // The same entity (the common case) is told by identity, without comparing names.
        a.entity === b.entity || a.entity.name == b.entity.name ? a.key < b.key : a.entity.name < b.entity.name
    }

    private static func mapWriteError(_ error: any Error, _ objectID: ObjectID?) -> SkerryError {
        var mapped = mapError(error, entity: objectID?.entity)
        if mapped.objectIDs.isEmpty, let objectID { mapped.objectIDs = [objectID] }
        if mapped.code == .constraintViolation, let objectID {
            let underlying = mapped.underlyingError
            // The constraint's columns, from the name of the unique index the server names.
            let constraint = mapped.postgres?.constraint
            let columns = objectID.entity.uniquenessConstraints.first {
                StoreIndexes.indexName(objectID.entityName, $0, unique: true) == constraint
            }
            mapped = SkerryError(
                .constraintViolation,
                "Saving \(objectID) would violate a uniqueness constraint of '\(objectID.entityName)': \(mapped.postgres?.message ?? mapped.message).",
                entityName: objectID.entityName, key: columns?.joined(separator: ","), objectID: objectID)
            mapped.underlyingError = underlying
        }
        return mapped
    }
}
