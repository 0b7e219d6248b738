import SkerryCore

/// Batch deletes (Core Data's `NSBatchDeleteRequest`) in a PostgreSQL store: one statement per
/// table, what refers to the deleted rows cleared, the change record and the persistent history
/// written, in one transaction.
extension PostgresStore {
    func batchDeleteCount(_ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool) throws(SkerryError) -> Int
    {
        try batchDelete(entity, predicate: predicate, includesSubentities: includesSubentities, returningKeys: false).count
    }

    func batchDelete(_ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool) throws(SkerryError)
        -> [ObjectID]
    {
        try batchDelete(entity, predicate: predicate, includesSubentities: includesSubentities, returningKeys: true).objectIDs
    }

    /// Deletes the rows matching `predicate` of the entity and, when `includesSubentities`, of
    /// its sub-entities (as Core Data's batch delete of a fetch that includes sub-entities): one
    /// statement per table (returning their keys when asked), then clears what refers to them
    /// (``BatchDeleteCleanup``: join-table rows, foreign keys and their order columns), in one
    /// transaction. Keys are unique in a hierarchy, so one list of keys serves every member.
    private func batchDelete(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool,
        returningKeys: Bool
    ) throws(SkerryError) -> (count: Int, objectIDs: [ObjectID]) {
        try checkWritable()
        let q = SQLBuilder.quote
        let identity = identity
        let recordsHistory = tracksPersistentHistory
        let members = planner.batchDeleteTables(entity, includesSubentities: includesSubentities)
        let cleanup = BatchDeleteCleanup(deleting: members, among: entities, layout: layout)
        let recordsUpdates = recordsHistory || options.propagatesChanges
        let returning = returningKeys || !cleanup.isEmpty || recordsUpdates
        let deletes = members.map { member in
            var delete = SQLBuilder.query(
                "DELETE FROM \(q(member.name))", StoreQuery(entity: member, predicate: predicate, sortKeys: []),
                layout: layout, ordered: false, dialect: .postgres)
            // With history, the values it keeps of the deleted rows come with their keys; with
            // history or change propagation, so do the objects their own foreign keys name (which
            // lose them).
            let preserved = recordsHistory ? HistoryEntry.preservedAttributes(member) : []
            let held = recordsUpdates ? planner.heldKeyReading(member, cleanup) : nil
            if returning {
                delete.text +=
                    " RETURNING "
                    + (([SQLBuilder.primaryKeyColumn] + preserved.map(\.name)).map(q) + (held?.expressions ?? []))
                    .joined(separator: ", ")
            }
            return (member: member, sql: delete, preserved: preserved, held: held)
        }
        let conditions = try Self.checkRawConditions(predicate)
        // Every batch delete runs in a transaction, even a single statement: with history it is
        // recorded; without, it first checks that no other instance turned tracking on. `BEGIN`,
        // the check and the deletes go in one pipeline, and so does the `COMMIT` when nothing
        // follows the deletes but reading their answers (nothing to clear, record or announce):
        // then the whole batch delete is one round trip, as the statement alone would be.
        // Otherwise the clearing is a second pipeline, with the `COMMIT` when nothing is recorded
        // or announced and no required relationship is checked (whose counts must be read before
        // the commit); else the change record, the history and the `COMMIT` are a third.
        let commitsWithDeletes = cleanup.isEmpty && !options.propagatesChanges && !recordsHistory
        let clearing = clearingStatements(cleanup, recording: recordsUpdates)
        let commitsWithClearing = !cleanup.isEmpty && !recordsUpdates && !cleanup.foreignKeys.contains(where: \.isRequired)
        return try withConnection(entity) { connection in
            try validateRawConditions(conditions, connection)
            do {
                var count = 0
                var answers: [PostgresResult?] = Array(repeating: nil, count: deletes.count)
                // The deletes and the clearing statements with parameters not prepared yet are
                // prepared first, together (their parameters' types are learned before they run):
                // each pipeline then waits once.
                try connection.prepareAhead(deletes.map(\.sql.text) + clearing.statements.map(\.sql))
                try connection.pipeline { pipeline in
                    try pipeline.send(PostgresConnection.beginWriteSQL, [])
                    if checksHistoryTracking { try sendTrackingCheck { sql in try pipeline.send(sql, []) } }
                    for (index, (_, delete, _, _)) in deletes.enumerated() {
                        try pipeline.send(delete.text, delete.bindings) { result in
                            if returning { answers[index] = result } else { count += result.affectedRows }
                        }
                    }
                    if commitsWithDeletes { try pipeline.send("COMMIT", []) }
                }
                var objectIDs: [ObjectID] = []
                var keys: [Int64] = []
                var history: [HistoryEntry] = []
                var record = PostgresChangeRecord()
                // The objects the deleted rows' own foreign keys named.
                var held: [HistoryEntry] = []
                for (index, (member, _, preserved, reading)) in deletes.enumerated() {
                    guard let result = answers[index] else { continue }
                    let memberKeys = (0..<result.rowCount).map { result.int64($0, 0) }
                    count += memberKeys.count
                    keys += memberKeys
                    if !memberKeys.isEmpty { record.deleted[member.name, default: []] += memberKeys }
                    if returningKeys { objectIDs += memberKeys.map { ObjectID(store: identity, entity: member, primaryKey: $0) } }
                    if recordsHistory {
                        for (row, key) in memberKeys.enumerated() {
                            let tombstone = preserved.isEmpty ? nil : Self.tombstone(result, Int32(row), preserved, from: 1)
                            history.append(HistoryEntry(type: .delete, entity: member, key: key, tombstone: tombstone))
                        }
                    }
                    if let reading, !reading.expressions.isEmpty {
                        let first = 1 + preserved.count
                        for row in 0..<result.rowCount {
                            held += reading.updates { expression in
                                let column = Int32(first + expression)
                                return result.isNull(row, column) ? nil : result.int64(row, column)
                            }
                        }
                    }
                }
                if commitsWithDeletes { return (count, objectIDs) }
                if !keys.isEmpty, !cleanup.isEmpty || !held.isEmpty {
                    let unlinked = try clearReferences(
                        to: keys, clearing, deleting: entity, held: held, commits: commitsWithClearing, connection)
                    if commitsWithClearing { return (count, objectIDs) }
                    for update in unlinked { record.updated[update.entity.name, default: []].append(update.key) }
                    if recordsHistory { history += unlinked }
                }
                try commitBatch(record, history: recordsHistory ? history : nil, connection)
                return (count, objectIDs)
            } catch {
                connection.rollBackAfterFailure()
                throw trackingRefusal(error) ?? error
            }
        }
    }

    /// The last pipeline of a batch delete or update: the change record (when it names any
    /// object and the store announces changes), the history's record (when `history` is given)
    /// and the `COMMIT`.
    func commitBatch(_ record: PostgresChangeRecord, history: [HistoryEntry]?, _ connection: PostgresConnection) throws {
        try connection.pipeline { pipeline in
            if let bindings = changeBindings(record) { try pipeline.send(Self.recordChangesSQL, bindings) }
            if let history { try sendHistory(history, pipeline) }
            try pipeline.send("COMMIT", [])
        }
    }

    /// The statements that clear what refers to deleted rows (``clearReferences(to:_:deleting:commits:_:)``),
    /// each taking the deleted keys as its one parameter: for each required relationship a count
    /// of the rows that still hold a deleted key, then the join-table rows' deletes, then the
    /// foreign keys' updates. When `recording` (history or change propagation), those return the
    /// objects that stay and lost a deleted object.
    private func clearingStatements(_ cleanup: BatchDeleteCleanup, recording: Bool) -> Clearing {
        let q = SQLBuilder.quote
        let layout = layout
        let answers = Clearing.Answers()
        func reading(_ links: StoreWritePlanner.ClearedLinks?) -> (sql: String, onResult: (PostgresResult) throws -> Void) {
            guard recording, let links else { return ("", { _ in }) }
            return (
                " RETURNING " + links.returning,
                { result in
                    for row in 0..<result.rowCount {
                        let entity = links.entity(code: links.hasCodes ? result.int64(row, 1) : nil, layout)
                        answers.cleared.append(
                            HistoryEntry(type: .update, entity: entity, key: result.int64(row, 0), properties: [links.name]))
                    }
                }
            )
        }
        var statements: [(sql: String, onResult: (PostgresResult) throws -> Void)] = []
        for foreignKey in cleanup.foreignKeys where foreignKey.isRequired {
            // The deleted rows are gone already: every row found stays.
            statements.append(
                (
                    "SELECT count(*) FROM \(q(foreignKey.table)) WHERE " + Self.inKeys(foreignKey.column),
                    { found in answers.held.append((foreignKey, found.rowCount > 0 ? Int(found.int64(0, 0)) : 0)) }
                ))
        }
        for join in cleanup.joinColumns {
            let (returning, onResult) = reading(planner.clearedLinks(of: join))
            statements.append(("DELETE FROM \(q(join.table)) WHERE " + Self.inKeys(join.column) + returning, onResult))
        }
        for foreignKey in cleanup.foreignKeys {
            let columns = [foreignKey.column] + (foreignKey.orderColumn.map { [$0] } ?? [])
            let (returning, onResult) = reading(planner.clearedLinks(of: foreignKey))
            statements.append(
                (
                    "UPDATE \(q(foreignKey.table)) SET \(columns.map { "\(q($0)) = NULL" }.joined(separator: ", ")) WHERE "
                        + Self.inKeys(foreignKey.column) + returning, onResult
                ))
        }
        return Clearing(statements: statements, answers: answers)
    }

    /// The statements of ``clearingStatements(_:recording:)`` and what their answers told.
    private struct Clearing {
        /// What the clearing statements' answers tell, filled as they are read.
        final class Answers {
            /// The required relationships' counts of rows still holding a deleted key.
            var held: [(foreignKey: BatchDeleteCleanup.ForeignKey, count: Int)] = []
            /// With `recording`, the objects that lost a deleted object, one entry per relationship.
            var cleared: [HistoryEntry] = []
        }

        let statements: [(sql: String, onResult: (PostgresResult) throws -> Void)]
        let answers: Answers
    }

    /// Clears what refers to the deleted `keys` (of `entity`'s hierarchy) with `clearing`'s
    /// statements, in one pipeline (with the `COMMIT` when `commits`: only when it checks no
    /// required relationship): join-table rows go, foreign keys (and the order of their ordered
    /// inverse) become NULL. Refuses when a required relationship of a row that stays holds one of
    /// them (the transaction then rolls back).
    ///
    /// When recording (history or change propagation), returns the objects that stay and lost
    /// a deleted object, as updates naming the relationships that lost it (one per object), as a
    /// save's clearing reports them (``SkerryCore/StoreWritePlanner/danglingLinkDeletes(of:_:)``):
    /// the rows whose foreign keys became NULL, the objects whose to-many relationship kept in a
    /// join table lost a deleted object, and those the deleted rows' own foreign keys named
    /// (`held`, returned by the deletes: ``SkerryCore/StoreWritePlanner/heldKeyReading(_:_:)``).
    private func clearReferences(
        to keys: [Int64], _ clearing: Clearing, deleting entity: EntityDescription, held heldUpdates: [HistoryEntry],
        commits: Bool, _ connection: PostgresConnection
    ) throws -> [HistoryEntry] {
        let answers = clearing.answers
        answers.held.removeAll()
        answers.cleared = heldUpdates
        if !clearing.statements.isEmpty || commits {
            try connection.pipeline { pipeline in
                for statement in clearing.statements {
                    try pipeline.send(statement.sql, expectingRows: false, onResult: statement.onResult) { try $0.append(keys: keys) }
                }
                if commits { try pipeline.send("COMMIT", []) }
            }
        }
        if let (foreignKey, count) = answers.held.first(where: { $0.count > 0 }) {
            throw BatchDeleteCleanup.requiredRelationshipError(foreignKey, count: count, deleting: entity)
        }
        // A join row may link two deleted objects: the one on the side that stays is gone too.
        let root = StoreWritePlanner.keyRoot(entity, among: entities)
        let deleted = Set(keys)
        return HistoryEntry.unlinkedUpdates(answers.cleared) { owner, key in
            deleted.contains(key) && StoreWritePlanner.keyRoot(owner, among: entities) === root
        }
    }
}
