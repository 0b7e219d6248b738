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
        let returning = returningKeys || !cleanup.isEmpty || options.propagatesChanges || recordsHistory
        let deletes = members.map { member in
            var delete = SQLBuilder.query(
                "DELETE FROM \(q(member.name))", StoreQuery(entity: member, predicate: predicate, sortKeys: []),
                layout: layout, ordered: false, dialect: .postgres)
            // With history, the values it keeps of the deleted rows come with their keys.
            let preserved = recordsHistory ? HistoryEntry.preservedAttributes(member) : []
            if returning {
                delete.text += " RETURNING " + ([SQLBuilder.primaryKeyColumn] + preserved.map(\.name)).map(q).joined(separator: ", ")
            }
            return (member: member, sql: delete, preserved: preserved)
        }
        let conditions = try Self.checkRawConditions(predicate)
        // Every batch delete runs in a transaction, even a single statement: with history it is
        // recorded; without, it first checks that no other instance turned tracking on. `BEGIN`,
        // the check and the deletes go in one pipeline, and so does the `COMMIT` when nothing
        // follows the deletes but reading their answers (nothing to clear, record or announce):
        // then the whole batch delete is one round trip, as the statement alone would be.
        let commitsWithDeletes = cleanup.isEmpty && !options.propagatesChanges && !recordsHistory
        return try withConnection(entity) { connection in
            try validateRawConditions(conditions, connection)
            do {
                var count = 0
                var answers: [PostgresResult?] = Array(repeating: nil, count: deletes.count)
                try connection.pipeline { pipeline in
                    try pipeline.send("BEGIN", [])
                    if checksHistoryTracking { try sendTrackingCheck { sql in try pipeline.send(sql, []) } }
                    for (index, (_, delete, _)) in deletes.enumerated() {
                        try pipeline.send(delete.text, delete.bindings) { result in
                            if returning { answers[index] = result } else { count += result.affectedRows }
                        }
                    }
                    if commitsWithDeletes { try pipeline.send("COMMIT", []) }
                }
                var objectIDs: [ObjectID] = []
                var keys: [Int64] = []
                var history: [HistoryEntry] = []
                for (index, (member, _, preserved)) in deletes.enumerated() {
                    guard let result = answers[index] else { continue }
                    let memberKeys = (0..<result.rowCount).map { result.int64($0, 0) }
                    count += memberKeys.count
                    keys += memberKeys
                    if returningKeys { objectIDs += memberKeys.map { ObjectID(store: identity, entity: member, primaryKey: $0) } }
                    if recordsHistory {
                        for (row, key) in memberKeys.enumerated() {
                            let tombstone = preserved.isEmpty ? nil : Self.tombstone(result, Int32(row), preserved, from: 1)
                            history.append(HistoryEntry(type: .delete, entity: member, key: key, tombstone: tombstone))
                        }
                    }
                    if let bindings = changeBindings(PostgresChangeRecord(deleted: memberKeys, of: member.name)) {
                        try connection.query(Self.recordChangesSQL, bindings)
                    }
                }
                if commitsWithDeletes { return (count, objectIDs) }
                if !keys.isEmpty {
                    for foreignKey in cleanup.foreignKeys where foreignKey.isRequired {
                        // The deleted rows are gone already: every row found stays.
                        let found = try connection.query(
                            "SELECT count(*) FROM \(q(foreignKey.table)) WHERE " + Self.inKeys(foreignKey.column)
                        ) { try $0.append(keys: keys) }
                        let count = found.rowCount > 0 ? Int(found.int64(0, 0)) : 0
                        if count > 0 {
                            throw BatchDeleteCleanup.requiredRelationshipError(foreignKey, count: count, deleting: entity)
                        }
                    }
                    for join in cleanup.joinColumns {
                        try connection.query("DELETE FROM \(q(join.table)) WHERE " + Self.inKeys(join.column)) { try $0.append(keys: keys) }
                    }
                    // With history, the rows whose links it cleared are recorded as updates of
                    // those relationships (one per row), as in the SQLite store.
                    var updateIndex: [String: [Int64: Int]] = [:]
                    for foreignKey in cleanup.foreignKeys {
                        let cleared = [foreignKey.column] + (foreignKey.orderColumn.map { [$0] } ?? [])
                        let owner = recordsHistory ? entities.first { $0.name == foreignKey.table } : nil
                        let result = try connection.query(
                            "UPDATE \(q(foreignKey.table)) SET \(cleared.map { "\(q($0)) = NULL" }.joined(separator: ", ")) WHERE "
                                + Self.inKeys(foreignKey.column) + (owner != nil ? " RETURNING \(q(SQLBuilder.primaryKeyColumn))" : "")
                        ) { try $0.append(keys: keys) }
                        guard let owner else { continue }
                        for row in 0..<result.rowCount {
                            let key = result.int64(row, 0)
                            // A row that held deleted objects in two relationships is one update of both.
                            if let index = updateIndex[owner.name]?[key] {
                                history[index].properties?.append(foreignKey.relationshipName)
                            } else {
                                updateIndex[owner.name, default: [:]][key] = history.count
                                history.append(
                                    HistoryEntry(type: .update, entity: owner, key: key, properties: [foreignKey.relationshipName]))
                            }
                        }
                    }
                }
                // The history's record ends with the commit (one pipeline).
                if recordsHistory, !history.isEmpty {
                    try recordHistory(history, connection, thenCommit: true)
                } else {
                    try connection.execute("COMMIT")
                }
                return (count, objectIDs)
            } catch {
                if connection.isHealthy && connection.isInTransaction {
                    // A failed rollback leaves the connection unhealthy or out of the transaction;
                    // the pool discards an unhealthy connection, and the delete's error is the one to report.
                    try? connection.execute("ROLLBACK")
                }
                throw trackingRefusal(error) ?? error
            }
        }
    }
}
