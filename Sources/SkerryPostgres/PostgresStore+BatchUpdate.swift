import SkerryCore

/// Batch updates (Core Data's `NSBatchUpdateRequest`) in a PostgreSQL store: the checks of
/// computed values, one `UPDATE` per table (returning the keys when asked for, recorded or
/// announced), the change record and the persistent history, in one transaction.
extension PostgresStore {
    /// Updates the rows matching `predicate` of the entity and, when `includesSubentities`, of
    /// its sub-entities (``SkerryCore/ObjectStore/batchUpdate(_:predicate:includesSubentities:assignments:returningIDs:)``).
    ///
    /// `BEGIN`, the check that no other instance turned tracking on, and the checks of values
    /// computed from the rows go in one pipeline; the updates in a second (with the first when
    /// there is nothing to check); the change record, the history and the `COMMIT` in a third.
    /// The checks and the updates run in one transaction at read committed: a row another
    /// transaction commits between them is updated without being checked, and the server then
    /// refuses an integer or `double` out of range itself (``batchUpdateError(_:_:)``).
    func batchUpdate(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool, assignments: [BatchUpdateAssignment],
        returningIDs: Bool
    ) throws(SkerryError) -> (count: Int, objectIDs: [ObjectID]) {
        try checkWritable()
        let q = SQLBuilder.quote
        let identity = identity
        let recordsHistory = tracksPersistentHistory
        let returning = returningIDs || recordsHistory || options.propagatesChanges
        let members = planner.batchDeleteTables(entity, includesSubentities: includesSubentities).map { member in
            let statements = BatchUpdateStatements(
                member, predicate: predicate, assignments: assignments, layout: layout, dialect: .postgres)
            var update = statements.update
            if returning { update.text += " RETURNING " + q(SQLBuilder.primaryKeyColumn) }
            return (statements: statements, update: update)
        }
        let checks = members.flatMap { member in member.statements.checks.map { (check: $0, entity: member.statements.entity) } }
        let names = assignments.map(\.attribute.name)
        let conditions = try Self.checkRawConditions(predicate)
        return try withConnection(entity) { connection in
            try validateRawConditions(conditions, connection)
            do {
                try connection.prepareAhead(checks.map(\.check.sql.text) + members.map(\.update.text))
                var count = 0
                var answers: [PostgresResult?] = Array(repeating: nil, count: members.count)
                func sendUpdates(_ pipeline: PostgresPipeline) throws {
                    for (index, member) in members.enumerated() {
                        try pipeline.send(member.update.text, member.update.bindings) { result in
                            if returning { answers[index] = result } else { count += result.affectedRows }
                        }
                    }
                }
                var found: SkerryError?
                try connection.pipeline { pipeline in
                    try pipeline.send(PostgresConnection.beginWriteSQL, [])
                    if checksHistoryTracking { try sendTrackingCheck { sql in try pipeline.send(sql, []) } }
                    for (check, member) in checks {
                        try pipeline.send(check.sql.text, check.sql.bindings) { result in
                            if found == nil, result.rowCount > 0 {
                                found = check.error(entity: member, key: result.int64(0, 0), store: identity)
                            }
                        }
                    }
                    if checks.isEmpty { try sendUpdates(pipeline) }
                }
                if let found { throw found }
                if !checks.isEmpty { try connection.pipeline { pipeline in try sendUpdates(pipeline) } }
                var objectIDs: [ObjectID] = []
                var history: [HistoryEntry] = []
                var record = PostgresChangeRecord()
                for (index, member) in members.enumerated() {
                    guard let result = answers[index] else { continue }
                    let memberEntity = member.statements.entity
                    let keys = (0..<result.rowCount).map { result.int64($0, 0) }
                    count += keys.count
                    if !keys.isEmpty { record.updated[memberEntity.name, default: []] += keys }
                    if returningIDs { objectIDs += keys.map { ObjectID(store: identity, entity: memberEntity, primaryKey: $0) } }
                    if recordsHistory {
                        history += keys.map { HistoryEntry(type: .update, entity: memberEntity, key: $0, properties: names) }
                    }
                }
                try connection.pipeline { pipeline in
                    if let bindings = changeBindings(record) { try pipeline.send(Self.recordChangesSQL, bindings) }
                    if recordsHistory { try sendHistory(history, pipeline) }
                    try pipeline.send("COMMIT", [])
                }
                return (count, objectIDs)
            } catch {
                if connection.isHealthy && connection.isInTransaction {
                    // A failed rollback leaves the connection unhealthy or out of the transaction;
                    // the pool discards an unhealthy connection, and the update's error is the one to report.
                    try? connection.execute("ROLLBACK")
                }
                throw trackingRefusal(error) ?? Self.batchUpdateError(error, entity)
            }
        }
    }

    /// The error a batch update of `entity` reports for `error`: the server's refusal of a value
    /// out of its column's range (`22003`: an integer wider than its attribute, a `double`
    /// overflow) as ``SkerryCore/SkerryError/Code/wrongValueType``, a unique violation with
    /// the update's own words; the others as the store maps them.
    static func batchUpdateError(_ error: any Error, _ entity: EntityDescription) -> any Error {
        guard let postgres = error as? PostgresError else { return error }
        var mapped: SkerryError
        if postgres.sqlState == "22003" {
            mapped = SkerryError(
                .wrongValueType,
                "The batch update of '\(entity.name)' computes a value out of an attribute's range (\(postgres.message)). Nothing was updated.",
                entityName: entity.name, key: postgres.column)
        } else if postgres.isUniqueViolation {
            mapped = SkerryError(
                .constraintViolation,
                "The batch update of '\(entity.name)' would violate a uniqueness constraint (\(postgres.message)). Nothing was updated.",
                entityName: entity.name)
        } else {
            return error
        }
        mapped.underlyingError = postgres
        return mapped
    }
}
