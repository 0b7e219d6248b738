import SkerryCore

/// Batch updates (Core Data's `NSBatchUpdateRequest`) in a PostgreSQL store: one `UPDATE` per
/// table (returning the keys when asked for, recorded or announced, and the values computed from
/// the rows, to check), the change record and the persistent history, in one transaction.
extension PostgresStore {
    /// Updates the rows matching `predicate` of the entity and, when `includesSubentities`, of
    /// its sub-entities (``SkerryCore/ObjectStore/batchUpdate(_:predicate:includesSubentities:assignments:returningIDs:)``).
    ///
    /// `BEGIN`, the check that no other instance turned tracking on and the updates go in one
    /// pipeline; the change record, the history and the `COMMIT` in a second. Values computed
    /// from the rows are checked as the updates return them, in the same transaction (so that
    /// no row escapes the check, whoever committed it last), before the commit: a required
    /// attribute left nil, a `float` out of its range (the server refuses an integer or a
    /// `double` out of its column's range itself: ``batchUpdateError(_:_:)``) rolls it back.
    func batchUpdate(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, includesSubentities: Bool, assignments: [BatchUpdateAssignment],
        returningIDs: Bool
    ) throws(SkerryError) -> (count: Int, objectIDs: [ObjectID]) {
        try checkWritable()
        let q = SQLBuilder.quote
        let identity = identity
        let recordsHistory = tracksPersistentHistory
        let members = planner.batchDeleteTables(entity, includesSubentities: includesSubentities).map { member in
            BatchUpdateStatements(member, predicate: predicate, assignments: assignments, layout: layout, dialect: .postgres)
        }
        // The attributes whose computed values are checked (the same for every member), after
        // the key in what each update returns.
        var checked: [BatchUpdateStatements.Check] = []
        for check in members.first?.checks ?? [] where !checked.contains(where: { $0.attribute.name == check.attribute.name }) {
            checked.append(check)
        }
        let returning = returningIDs || recordsHistory || options.propagatesChanges || !checked.isEmpty
        let updates = members.map { member in
            var update = member.update
            if returning {
                update.text +=
                    " RETURNING " + ([SQLBuilder.primaryKeyColumn] + checked.map(\.attribute.name)).map(q).joined(separator: ", ")
            }
            return update
        }
        let names = assignments.map(\.attribute.name)
        let conditions = try Self.checkRawConditions(predicate)
        return try withConnection(entity) { connection in
            try validateRawConditions(conditions, connection)
            do {
                try connection.prepareAhead(updates.map(\.text))
                var count = 0
                var answers: [PostgresResult?] = Array(repeating: nil, count: members.count)
                try connection.pipeline { pipeline in
                    try pipeline.send(PostgresConnection.beginWriteSQL, [])
                    if checksHistoryTracking { try sendTrackingCheck { sql in try pipeline.send(sql, []) } }
                    for (index, update) in updates.enumerated() {
                        try pipeline.send(update.text, update.bindings) { result in
                            if returning { answers[index] = result } else { count += result.affectedRows }
                        }
                    }
                }
                var objectIDs: [ObjectID] = []
                var history: [HistoryEntry] = []
                var record = PostgresChangeRecord()
                for (index, member) in members.enumerated() {
                    guard let result = answers[index] else { continue }
                    let memberEntity = member.entity
                    for row in 0..<result.rowCount {
                        for (offset, check) in checked.enumerated() where !Self.holds(result, row, Int32(1 + offset), check) {
                            throw check.error(entity: memberEntity, key: result.int64(row, 0), store: identity)
                        }
                    }
                    let keys = (0..<result.rowCount).map { result.int64($0, 0) }
                    count += keys.count
                    if !keys.isEmpty { record.updated[memberEntity.name, default: []] += keys }
                    if returningIDs { objectIDs += keys.map { ObjectID(store: identity, entity: memberEntity, primaryKey: $0) } }
                    if recordsHistory {
                        history += keys.map { HistoryEntry(type: .update, entity: memberEntity, key: $0, properties: names) }
                    }
                }
                try commitBatch(record, history: recordsHistory ? history : nil, connection)
                return (count, objectIDs)
            } catch {
                connection.rollBackAfterFailure()
                throw trackingRefusal(error) ?? Self.batchUpdateError(error, entity)
            }
        }
    }

    /// Whether the value an update returned in `column` of `row` holds `check`: a value, for a
    /// required attribute; a value in the attribute's range.
    static func holds(_ result: PostgresResult, _ row: Int32, _ column: Int32, _ check: BatchUpdateStatements.Check) -> Bool {
        let attribute = check.attribute
        switch check.kind {
        case .missingValue: return !result.isNull(row, column)
        case .range: return (result.value(row, column, as: attribute.type) ?? .null).fits(attribute.type)
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
