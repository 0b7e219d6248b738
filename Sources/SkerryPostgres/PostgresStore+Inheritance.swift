import SkerryCore

/// Reads of an entity together with its sub-entities, as the SQLite store does them: every
/// entity of a hierarchy has its own table, keys are unique in the hierarchy, and a read of an
/// entity that has sub-entities selects from the union of its family's tables
/// (``SkerryCore/SQLiteStoreLayout/readSource(_:)``), each row tagged with its entity's code.
extension PostgresStore {
    /// The IDs of the rows of `query`'s entity and its sub-entities, in the query's order, each
    /// under its own entity.
    func fetchFamilyObjectIDs(_ query: StoreQuery, _ connection: PostgresConnection) throws -> [ObjectID] {
        let sql = layout.familyObjectIDsQuery(query, dialect: .postgres)
        let result = try connection.query(sql.text, sql.bindings)
        var objectIDs: [ObjectID] = []
        objectIDs.reserveCapacity(Int(result.rowCount))
        for row in 0..<result.rowCount {
            // Codes come from the layout's own union: a code that names no entity is unreachable.
            guard let entity = layout.entity(code: result.int64(row, 1)) else { continue }
            objectIDs.append(ObjectID(store: identity, entity: entity, primaryKey: result.int64(row, 0)))
        }
        return objectIDs
    }

    /// The rows of `query`'s entity and its sub-entities, in the query's order, each decoded as
    /// its own entity (with the sub-entity's own attributes): the matching IDs first, then each
    /// entity's rows by key, in one repeatable-read snapshot (a row deleted in between cannot
    /// go missing from the answer).
    func fetchFamilyRows(_ query: StoreQuery) throws(SkerryError) -> [RowSnapshot] {
        try read(query.entity, predicate: query.predicate, snapshot: true) { connection in try familyRows(query, connection) }
    }

    private func familyRows(_ query: StoreQuery, _ connection: PostgresConnection) throws -> [RowSnapshot] {
        try layout.rows(of: fetchFamilyObjectIDs(query, connection), dialect: .postgres) { entity, entityLayout, sql, keys in
            let result = try connection.query(sql, [keys])
            return try (0..<result.rowCount).map { row throws(SkerryError) in try decodeRow(result, row, entity, entityLayout) }
        }
    }
}
