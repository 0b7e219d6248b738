/// Reads of an entity together with its sub-entities. Every entity of a hierarchy has its own
/// table, keys are unique in the hierarchy, and a read of an entity that has sub-entities selects
/// from the union of its family's tables (``SQLiteStoreLayout/source(_:)``), named after the
/// entity so that conditions and sort keys compile as for one table.
extension SQLiteStore {
    /// What `query` selects from, named after its entity: the entity's table, or the union of its
    /// family's tables when the query includes sub-entities and there are some.
    func readSource(_ query: StoreQuery) -> String {
        guard query.includesSubentities, layout.family(query.entity) != nil else { return SQLBuilder.quote(query.entity.name) }
        return layout.source(query.entity) + " AS " + SQLBuilder.quote(query.entity.name)
    }

    /// The IDs of the rows of `query`'s entity and its sub-entities, in the query's order, each
    /// under its own entity.
    func fetchFamilyObjectIDs(_ query: StoreQuery, _ connection: SQLiteConnection) throws -> [ObjectID] {
        let q = SQLBuilder.quote, table = q(query.entity.name)
        let head = "SELECT \(table).\(q(SQLBuilder.primaryKeyColumn)), \(table).\(q(SQLBuilder.entityColumn)) FROM \(readSource(query))"
        let sql = SQLBuilder.query(head, query, layout: layout)
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
            let objectIDs = try fetchFamilyObjectIDs(query, connection)
            var byEntity: [ObjectIdentifier: (entity: EntityDescription, keys: [Int64])] = [:]
            for objectID in objectIDs {
                byEntity[ObjectIdentifier(objectID.entity), default: (objectID.entity, [])].keys.append(objectID.key)
            }
            var rows: [ObjectID: RowSnapshot] = [:]
            rows.reserveCapacity(objectIDs.count)
            for (entity, keys) in byEntity.values {
                let entityLayout = try layout.of(entity)
                let statement = try connection.cachedStatement(
                    entityLayout.selectRows + " WHERE " + SQLBuilder.inKeys(SQLBuilder.primaryKeyColumn))
                try statement.bind([SQLBuilder.jsonKeys(keys)])
                while try statement.step() {
                    let row = try decodeRow(statement, entity, entityLayout)
                    rows[row.objectID] = row
                }
            }
            return objectIDs.compactMap { rows[$0] }
        }
    }
}
