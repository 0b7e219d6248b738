/// Batch updates (Core Data's `NSBatchUpdateRequest`) in a SQLite store, file or in-memory: the
/// checks of computed values, then one `UPDATE` per table (the keys read first when asked for
/// or recorded), and the persistent history, in one transaction.
extension SQLiteStore {
    /// Updates the rows matching `predicate` — the entity's and, unless told otherwise, its
    /// sub-entities', table by table, the predicate compiled for each
    /// (``ObjectStore/batchUpdate(_:predicate:includesSubentities:assignments:returningIDs:)``).
    /// The write lock is held from the checks to the commit, so the rows checked, read and
    /// updated are the same.
    func batchUpdate(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool, assignments: [BatchUpdateAssignment],
        returningIDs: Bool
    ) throws(SkerryError) -> (count: Int, objectIDs: [ObjectID]) {
        try checkWritable()
        let members = planner.batchDeleteTables(entity, includesSubentities: includesSubentities)
        let statements = members.map {
            BatchUpdateStatements($0, predicate: predicate, assignments: assignments, layout: layout, dialect: .sqlite)
        }
        do {
            return try batchUpdate(entity, predicate, statements, returningIDs: returningIDs, names: assignments.map(\.attribute.name))
        } catch  where error.code == .constraintViolation && error.sqlite != nil {
            throw SkerryError(
                .constraintViolation,
                "The batch update of '\(entity.name)' would violate a uniqueness constraint (\(error.sqlite?.message ?? error.message)). Nothing was updated.",
                entityName: entity.name, sqlite: error.sqlite)
        }
    }

    /// Runs `statements` (one member table each) in one transaction.
    private func batchUpdate(
        _ entity: EntityDescription, _ predicate: ResolvedPredicate?, _ statements: [BatchUpdateStatements], returningIDs: Bool,
        names: [String]
    ) throws(SkerryError) -> (count: Int, objectIDs: [ObjectID]) {
        let recordsHistory = tracksPersistentHistory
        let selectsKeys = returningIDs || recordsHistory
        let identity = identity
        return try writeConnection(entity) { connection in
            try checkRawConditions(predicate, connection)
            return try connection.writeTransaction {
                if checksHistoryTracking { try refuseIfHistoryTracked(connection) }
                for member in statements {
                    for check in member.checks {
                        let statement = try connection.cachedStatement(check.sql.text)
                        defer { statement.reset() }
                        try statement.bind(check.sql.bindings)
                        if try statement.step() {
                            throw check.error(entity: member.entity, key: statement.int64(at: 0), store: identity)
                        }
                    }
                }
                var count = 0
                var objectIDs: [ObjectID] = []
                var history: [HistoryEntry] = []
                for member in statements {
                    if selectsKeys {
                        let statement = try connection.cachedStatement(member.selectKeys.text)
                        defer { statement.reset() }
                        try statement.bind(member.selectKeys.bindings)
                        while try statement.step() {
                            let key = statement.int64(at: 0)
                            if returningIDs { objectIDs.append(ObjectID(store: identity, entity: member.entity, primaryKey: key)) }
                            if recordsHistory {
                                history.append(HistoryEntry(type: .update, entity: member.entity, key: key, properties: names))
                            }
                        }
                    }
                    try connection.cachedStatement(member.update.text).run(member.update.bindings)
                    count += connection.changes
                }
                try recordHistory(history, connection)
                return (count, objectIDs)
            }
        }
    }
}
