/// Reads of an entity together with its sub-entities. Every entity of a hierarchy has its own
/// table, keys are unique in the hierarchy, and a read of an entity that has sub-entities selects
/// from the union of its family's tables (``SQLiteStoreLayout/source(_:)``), named after the
/// entity so that conditions and sort keys compile as for one table.
extension SQLiteStore {
    /// What `query` selects from (``SQLiteStoreLayout/readSource(_:)``).
    func readSource(_ query: StoreQuery) -> String { layout.readSource(query) }

    /// The IDs of the rows of `query`'s entity and its sub-entities, in the query's order, each
    /// under its own entity.
    func fetchFamilyObjectIDs(_ query: StoreQuery, _ connection: SQLiteConnection) throws -> [ObjectID] {
        let sql = layout.familyObjectIDsQuery(query, dialect: .sqlite)
        try checkRawConditions(query.predicate, connection)
        let statement = try connection.cachedStatement(sql.text)
        try statement.bind(sql.bindings)
        var objectIDs: [ObjectID] = []
        while try statement.step() {
            guard let entity = layout.entity(code: statement.int64(at: 1)) else { continue } // unreachable: codes come from the layout
            objectIDs.append(ObjectID(store: identity, entity: entity, primaryKey: statement.int64(at: 0)))
        }
        return objectIDs
    }

    /// The rows of `query`'s entity and its sub-entities, in the query's order, each decoded as
    /// its own entity (with the sub-entity's own attributes): the matching IDs first, then each
    /// entity's rows by key, in the same read transaction.
    func fetchFamilyRows(_ query: StoreQuery) throws(SkerryError) -> [RowSnapshot] {
        try read(query.entity) { connection in
            try layout.rows(of: fetchFamilyObjectIDs(query, connection), dialect: .sqlite) { entity, entityLayout, sql, keys in
                let statement = try connection.cachedStatement(sql)
                try statement.bind([keys])
                var rows: [RowSnapshot] = []
                while try statement.step() { rows.append(try decodeRow(statement, entity, entityLayout)) }
                return rows
            }
        }
    }
}
