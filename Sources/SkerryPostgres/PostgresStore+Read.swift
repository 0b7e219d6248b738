import SkerryCore

extension PostgresStore {
    // MARK: Decoding

    /// Decodes row `row` of a result made from `layout.selectRows`: key, version, attributes, and
    /// the to-one relationships kept in foreign-key columns (the others are not loaded).
    /// Complexity: O(attributes + relationships).
    func decodeRow(
        _ result: PostgresResult, _ row: Int32, _ entity: EntityDescription,
        _ entityLayout: SQLiteEntityLayout
    ) throws(SkerryError) -> RowSnapshot {
        let key = result.int64(row, 0)
        let objectID = ObjectID(store: identity, entity: entity, primaryKey: key)
        let values = try decodeValues(result, row, entity, firstColumn: 2, attributeIndexes: nil, primaryKey: key)
        var relationships: [RelationshipValue] = []
        if !entity.relationships.isEmpty {
            relationships = Array(repeating: .notLoaded, count: entity.relationships.count)
            var column = Int32(entity.storedAttributeCount + 2)
            for (position, index) in entityLayout.foreignKeyIndexes.enumerated() {
                relationships[index] = .toOne(
                    result.isNull(row, column)
                        ? nil
                        : ObjectID(
                            store: identity, entity: entityLayout.foreignKeyDestinations[position], primaryKey: result.int64(row, column)))
                column += 1
            }
        }
        return RowSnapshot(objectID: objectID, version: result.int64(row, 1), values: values, relationships: relationships)
    }

    /// The values of the attributes at `attributeIndexes` (all, when nil) of row `row`, from
    /// `firstColumn` on.
    func decodeValues(
        _ result: PostgresResult, _ row: Int32, _ entity: EntityDescription, firstColumn: Int32,
        attributeIndexes: [Int]?, primaryKey: Int64
    ) throws(SkerryError) -> [AttributeValue] {
        // Transient attributes have no column: they read as their default values (all of them
        // when `attributeIndexes` is nil; a listed one takes the place of a NULL column).
        let indexes = attributeIndexes ?? Array(0..<entity.storedAttributeCount)
        var values: [AttributeValue] = []
        values.reserveCapacity(attributeIndexes?.count ?? entity.attributes.count)
        var column = firstColumn
        for index in indexes {
            let attribute = entity.attributes[index]
            if index >= entity.storedAttributeCount {
                values.append(attribute.defaultValue)
                column += 1
                continue
            }
            guard let value = result.value(row, column, as: attribute.type) else {
                throw Self.undecodable(entity, attribute, primaryKey: primaryKey)
            }
            values.append(value)
            column += 1
        }
        if attributeIndexes == nil { values += entity.attributes[entity.storedAttributeCount...].map(\.defaultValue) }
        return values
    }

    // MARK: Queries

    /// Runs a read with the store's error mapping. Reads whose predicate holds raw SQL run in a
    /// read-only transaction, so that a condition cannot write; the condition's shape and
    /// parameter count are checked first.
    func read<T>(
        _ entity: EntityDescription, predicate: ResolvedPredicate?,
        _ body: (PostgresConnection) throws -> T
    ) throws(SkerryError) -> T {
        let conditions = try Self.checkRawConditions(predicate)
        return try withConnection(entity) { connection in
            guard !conditions.isEmpty else { return try body(connection) }
            try validateRawConditions(conditions, connection)
            try connection.execute("BEGIN READ ONLY")
            do {
                let result = try body(connection)
                try connection.execute("COMMIT")
                return result
            } catch {
                // The body's error is the one to report; a failed rollback leaves the connection
                // unhealthy, and the pool closes it.
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    func fetchRows(_ query: StoreQuery) throws(SkerryError) -> [RowSnapshot] {
        let entityLayout = try layout.of(query.entity)
        let sql = SQLBuilder.query(entityLayout.selectRows, query, layout: layout, dialect: .postgres)
        return try read(query.entity, predicate: query.predicate) { connection in
            let result = try connection.query(sql.text, sql.bindings)
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(Int(result.rowCount))
            for row in 0..<result.rowCount {
                rows.append(try decodeRow(result, row, query.entity, entityLayout))
            }
            return rows
        }
    }

    /// `column = ANY(?::bigint[])`: one prepared statement for any number of keys.
    static func inKeys(_ column: String) -> String {
        "\(SQLBuilder.quote(column)) = ANY(?::bigint[])"
    }

    /// The keys as the array literal ``inKeys(_:)`` binds.
    static func keyArray(_ keys: [Int64]) -> AttributeValue {
        .string("{" + keys.map(String.init).joined(separator: ",") + "}")
    }

    func fetchRows(_ entity: EntityDescription, primaryKeys: [Int64]) throws(SkerryError) -> [RowSnapshot] {
        guard !primaryKeys.isEmpty else { return [] }
        let entityLayout = try layout.of(entity)
        let sql = entityLayout.selectRows + " WHERE " + Self.inKeys(SQLBuilder.primaryKeyColumn)
        return try withConnection(entity) { connection in
            let result = try connection.query(sql, [Self.keyArray(primaryKeys)])
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(Int(result.rowCount))
            for row in 0..<result.rowCount {
                rows.append(try decodeRow(result, row, entity, entityLayout))
            }
            return rows
        }
    }

    func fetchRelated(_ entity: EntityDescription, relationship: Int, sourceKeys: [Int64]) throws(SkerryError) -> [Int64: [ObjectID]] {
        guard !sourceKeys.isEmpty else { return [:] }
        let q = SQLBuilder.quote
        let key = SQLBuilder.primaryKeyColumn
        let sql: String
        switch try layout.of(entity).storage[relationship] {
        case .foreignKey(let column):
            sql = "SELECT \(q(key)), \(q(column)) FROM \(q(entity.name)) WHERE " + Self.inKeys(key) + " AND \(q(column)) IS NOT NULL"
        case .inverseForeignKey(let table, let column, let orderColumn):
            sql =
                "SELECT \(q(column)), \(q(key)) FROM \(q(table)) WHERE " + Self.inKeys(column)
                + " ORDER BY \(q(column)), " + (orderColumn.map { "\(q($0)) NULLS FIRST, " } ?? "") + q(key)
        case .joinTable(let table, let source, let target, let orderColumn):
            sql =
                "SELECT \(q(source)), \(q(target)) FROM \(q(table)) WHERE " + Self.inKeys(source)
                + " ORDER BY \(q(source)), " + (orderColumn.map { "\(q($0)) NULLS FIRST, " } ?? "") + q(target)
        case .transient:
            return [:] // a transient relationship relates nothing in the store
        }
        let destinationName = entity.relationships[relationship].destinationEntityName
        guard let destination = entities.first(where: { $0.name == destinationName }) else {
            throw SkerryError(
                .noStore,
                "This store does not hold '\(destinationName)', the destination of '\(entity.name).\(entity.relationships[relationship].name)'.",
                entityName: entity.name, key: entity.relationships[relationship].name)
        }
        let identity = identity
        return try withConnection(entity) { connection in
            let result = try connection.query(sql, [Self.keyArray(sourceKeys)])
            var related: [Int64: [ObjectID]] = [:]
            for row in 0..<result.rowCount {
                related[result.int64(row, 0), default: []].append(
                    ObjectID(store: identity, entity: destination, primaryKey: result.int64(row, 1)))
            }
            return related
        }
    }

    func fetchObjectIDs(_ query: StoreQuery) throws(SkerryError) -> [ObjectID] {
        let head = "SELECT \(SQLBuilder.quote(SQLBuilder.primaryKeyColumn)) FROM \(SQLBuilder.quote(query.entity.name))"
        let sql = SQLBuilder.query(head, query, layout: layout, dialect: .postgres)
        let (identity, entity) = (identity, query.entity)
        return try read(query.entity, predicate: query.predicate) { connection in
            let result = try connection.query(sql.text, sql.bindings)
            return (0..<result.rowCount).map { ObjectID(store: identity, entity: entity, primaryKey: result.int64($0, 0)) }
        }
    }

    func count(_ query: StoreQuery) throws(SkerryError) -> Int {
        let inner = SQLBuilder.query(
            "SELECT 1 FROM \(SQLBuilder.quote(query.entity.name))", query, layout: layout,
            ordered: false, dialect: .postgres)
        let text = "SELECT count(*) FROM (\(inner.text)) AS counted"
        return try read(query.entity, predicate: query.predicate) { connection in
            Int(try connection.scalarInt64(text, inner.bindings) ?? 0)
        }
    }

    func fetchColumns(_ query: StoreQuery, attributeIndexes: [Int]) throws(SkerryError) -> [[AttributeValue]] {
        let entity = query.entity
        let columns = attributeIndexes.map { $0 < entity.storedAttributeCount ? SQLBuilder.quote(entity.attributes[$0].name) : "NULL" }
        let head =
            "SELECT \(SQLBuilder.quote(SQLBuilder.primaryKeyColumn))" + columns.map { ", " + $0 }.joined()
            + " FROM \(SQLBuilder.quote(entity.name))"
        let sql = SQLBuilder.query(head, query, layout: layout, dialect: .postgres)
        return try read(entity, predicate: query.predicate) { connection in
            let result = try connection.query(sql.text, sql.bindings)
            var rows: [[AttributeValue]] = []
            rows.reserveCapacity(Int(result.rowCount))
            for row in 0..<result.rowCount {
                rows.append(
                    try decodeValues(
                        result, row, entity, firstColumn: 1, attributeIndexes: attributeIndexes,
                        primaryKey: result.int64(row, 0)))
            }
            return rows
        }
    }
}
