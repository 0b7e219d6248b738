/// The read SQL both stores of this package share, in a dialect: reads of an entity together
/// with its sub-entities (the union of its family's tables, ``SQLiteStoreLayout/source(_:)``,
/// named after the entity so that conditions and sort keys compile as for one table) and reads
/// of a relationship's members.
extension SQLiteStoreLayout {
    /// What `query` selects from, named after its entity: the entity's table, or the union of its
    /// family's tables when the query includes sub-entities and there are some.
    package func readSource(_ query: StoreQuery) -> String {
        guard query.includesSubentities, family(query.entity) != nil else { return SQLBuilder.quote(query.entity.name) }
        return source(query.entity) + " AS " + SQLBuilder.quote(query.entity.name)
    }

    /// Whether `query` reads its entity together with sub-entities that the store holds.
    package func readsFamily(_ query: StoreQuery) -> Bool {
        query.includesSubentities && family(query.entity) != nil
    }

    /// `SELECT key, entity code` of the rows of `query`'s entity and its sub-entities, in the
    /// query's order (a query that ``readsFamily(_:)``).
    package func familyObjectIDsQuery(_ query: StoreQuery, dialect: SQLDialect) -> BoundSQL {
        let q = SQLBuilder.quote, table = q(query.entity.name)
        let head = "SELECT \(table).\(q(SQLBuilder.primaryKeyColumn)), \(table).\(q(SQLBuilder.entityColumn)) FROM \(readSource(query))"
        return SQLBuilder.query(head, query, layout: self, dialect: dialect)
    }

    /// The rows of `objectIDs` (the IDs of a family read, each under its own entity), in their
    /// order: `readRows` runs, once per entity, the SQL given (the entity's `selectRows` by key)
    /// with the keys bound as its one parameter, and decodes the rows as that entity's.
    package func rows(
        of objectIDs: [ObjectID], dialect: SQLDialect,
        _ readRows: (_ entity: EntityDescription, _ layout: SQLiteEntityLayout, _ sql: String, _ keys: AttributeValue) throws ->
            [RowSnapshot]
    ) throws -> [RowSnapshot] {
        var byEntity: [ObjectIdentifier: (entity: EntityDescription, keys: [Int64])] = [:]
        for objectID in objectIDs {
            byEntity[ObjectIdentifier(objectID.entity), default: (objectID.entity, [])].keys.append(objectID.key)
        }
        var rows: [ObjectID: RowSnapshot] = [:]
        rows.reserveCapacity(objectIDs.count)
        for (entity, keys) in byEntity.values {
            let entityLayout = try of(entity)
            let sql = entityLayout.selectRows + " WHERE " + dialect.inKeys(SQLBuilder.primaryKeyColumn)
            for row in try readRows(entity, entityLayout, sql, dialect.keyList(keys)) { rows[row.objectID] = row }
        }
        return objectIDs.compactMap { rows[$0] }
    }

    /// The query that reads the members of relationship `relationship` of the rows of `entity`
    /// whose keys are bound as one parameter (``SQLDialect/keyList(_:)``): each row is the source
    /// key, the member's key, and (when `hasEntityColumn`) the code of the member's entity, a
    /// destination with sub-entities; members in their order. Nil for a transient relationship,
    /// which relates nothing in the store.
    /// - Throws: ``SkerryError/Code/noStore`` when the store does not hold the destination.
    package func relatedQuery(
        _ entity: EntityDescription, relationship: Int, dialect: SQLDialect
    ) throws(SkerryError) -> (sql: String, destination: EntityDescription, hasEntityColumn: Bool)? {
        let q = SQLBuilder.quote
        let key = SQLBuilder.primaryKeyColumn
        let declared = entity.relationships[relationship]
        guard let destination = self.entity(named: declared.destinationEntityName) else {
            throw SkerryError(
                .noStore,
                "This store does not hold '\(declared.destinationEntityName)', the destination of '\(entity.name).\(declared.name)'.",
                entityName: entity.name, key: declared.name)
        }
        // PostgreSQL sorts NULL last in ascending order; SQLite (and an unordered member) first.
        let nullsFirst = dialect == .postgres ? " NULLS FIRST" : ""
        // A destination with sub-entities: a third column gives each related row's entity.
        let hasFamily = family(destination) != nil
        func entityCode(_ key: String) -> String { self.entityCode(destination, key: key).map { ", " + $0 } ?? "" }
        let sql: String
        switch try of(entity).storage[relationship] {
        case .transient:
            return nil
        case .foreignKey(let column):
            sql =
                "SELECT \(q(key)), \(q(column))\(entityCode("\(q(entity.name)).\(q(column))")) FROM \(q(entity.name)) WHERE "
                + dialect.inKeys(key) + " AND \(q(column)) IS NOT NULL"
        case .inverseForeignKey(let table, let column, let orderColumn):
            sql =
                "SELECT \(q(column)), \(q(key))\(hasFamily ? ", " + q(SQLBuilder.entityColumn) : "") FROM "
                + (hasFamily ? source(destination) + " AS \(q(table))" : q(table)) + " WHERE " + dialect.inKeys(column)
                + " ORDER BY \(q(column)), " + (orderColumn.map { "\(q($0))\(nullsFirst), " } ?? "") + q(key)
        case .joinTable(let table, let source, let target, let orderColumn):
            sql =
                "SELECT \(q(source)), \(q(target))\(entityCode("\(q(table)).\(q(target))")) FROM \(q(table)) WHERE "
                + dialect.inKeys(source)
                + " ORDER BY \(q(source)), " + (orderColumn.map { "\(q($0))\(nullsFirst), " } ?? "") + q(target)
        }
        return (sql, destination, hasFamily)
    }
}
