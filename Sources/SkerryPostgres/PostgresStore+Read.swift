import CLibPQ
import SkerryCore

extension PostgresStore {
    // MARK: Decoding

    /// How the rows of one result made from an entity's `selectRows` are read (key, version,
    /// attributes, then the to-one relationships kept in foreign-key columns; the others are not
    /// loaded): the column decoders and ID spaces worked out once per result, so that a row costs
    /// its cells and nothing more.
    struct RowDecoder {
        let result: PostgresResult
        let entity: EntityDescription
        /// One per stored attribute, for the columns from 2 on.
        let decoders: [PostgresColumnDecoder]
        /// The entity's reading, when the result's columns have the types the store gives its
        /// attributes (the usual case): rows are read into storage through it.
        let reading: PostgresRowReading?
        let space: ObjectIDSpace
        let foreignKeyIndexes: [Int]
        let foreignKeySpaces: [ObjectIDSpace]
        /// The foreign keys whose destination has sub-entities: an entity-code column each, after
        /// the foreign keys.
        let foreignKeyEntityColumns: [Int]
        /// The store's layout (made with its identity), for the spaces of entity codes.
        let storeLayout: SQLiteStoreLayout
        /// Whether the entity has relationships (worked out once per result).
        let hasRelationships: Bool
        /// Whether some attribute the store does not keep (a transient one) has a default value,
        /// which ``read(_:into:)`` sets (worked out once per result).
        let hasTransientDefaults: Bool

        init(
            _ result: PostgresResult, _ entity: EntityDescription, _ entityLayout: SQLiteEntityLayout,
            _ storeLayout: SQLiteStoreLayout, reading: PostgresRowReading? = nil
        ) {
            self.result = result
            self.entity = entity
            decoders = result.decoders(entity.attributeTypes.prefix(entity.storedAttributeCount), from: 2)
            self.reading = reading.flatMap { $0.matches(result, from: 2) ? $0 : nil }
            space = entityLayout.spaces!.own
            foreignKeyIndexes = entityLayout.foreignKeyIndexes
            foreignKeySpaces = entityLayout.spaces!.foreignKeyDestinations
            foreignKeyEntityColumns = entityLayout.foreignKeyEntityColumns
            self.storeLayout = storeLayout
            hasRelationships = !entity.relationships.isEmpty
            hasTransientDefaults = entity.defaultValues[decoders.count...].contains { !$0.isNull }
            // Release check: rows are read from their cells (`read(_:into:)`) without a check
            // per cell; the key, the version and the attributes must all have a column.
            precondition(Int(result.columnCount) >= 2 + decoders.count, "PostgreSQL result with fewer columns than the entity's")
        }

        @inline(__always)
        func objectID(_ row: Int32) -> ObjectID { ObjectID(space: space, key: result.int64(row, 0)) }

        /// The ID of the row whose cells are `cells` (``PostgresResult/cells(_:)``).
        @inline(__always)
        func objectID(_ cells: UnsafePointer<SkerryPQCell>) -> ObjectID { ObjectID(space: space, key: PostgresResult.int64(cells[0])) }

        @inline(__always)
        func version(_ row: Int32) -> Int64 { result.int64(row, 1) }

        /// The version of the row whose cells are `cells`.
        @inline(__always)
        func version(_ cells: UnsafePointer<SkerryPQCell>) -> Int64 { PostgresResult.int64(cells[1]) }

        /// The row's relationships: the to-ones kept in foreign-key columns, after the attributes.
        /// Inlined for an entity without relationships: no call per row.
        @inline(__always)
        func relationships(_ row: Int32) -> [RelationshipValue] {
            hasRelationships ? readRelationships(row) : []
        }

        fileprivate func readRelationships(_ row: Int32) -> [RelationshipValue] {
            var relationships = Array(repeating: RelationshipValue.notLoaded, count: entity.relationships.count)
            var column = Int32(decoders.count + 2)
            for (position, index) in foreignKeyIndexes.enumerated() {
                relationships[index] = .toOne(
                    result.isNull(row, column) ? nil : ObjectID(space: foreignKeySpaces[position], key: result.int64(row, column)))
                column += 1
            }
            // A destination with sub-entities: the related row's entity follows the foreign keys.
            for position in foreignKeyEntityColumns {
                let index = foreignKeyIndexes[position]
                if case .toOne(let related?) = relationships[index], let space = storeLayout.space(code: result.int64(row, column)) {
                    relationships[index] = .toOne(ObjectID(space: space, key: related.key))
                }
                column += 1
            }
            return relationships
        }

        /// The row's attribute values; transient attributes, which the store does not keep, get
        /// their default values.
        func values(_ row: Int32) throws(SkerryError) -> [AttributeValue] {
            var values: [AttributeValue] = []
            values.reserveCapacity(entity.defaultValues.count)
            var column: Int32 = 2
            for decoder in decoders {
                guard let value = result.value(row, column, decoder) else { throw undecodable(result.int64(row, 0), at: values.count) }
                values.append(value)
                column += 1
            }
            values += entity.defaultValues[decoders.count...]
            return values
        }

        /// Reads the attribute values of the row whose cells are `cells` (``PostgresResult/cells(_:)``,
        /// which has a cell for the key, the version and each attribute: checked by `init`) into
        /// `base` (storage laid out by the entity's `valueLayout`, holding no value); transient
        /// attributes get their default values. On failure, `base` holds the values read before
        /// it, each with its bit set.
        func read(_ cells: UnsafePointer<SkerryPQCell>, into base: UnsafeMutableRawPointer) throws(SkerryError) {
            let valueLayout = entity.valueLayout
            let failed =
                if let reading { reading.read(cells, from: 2, into: base, valueLayout) } else {
                    PostgresResult.decode(cells, from: 2, decoders, into: base, valueLayout)
                }
            if let index = failed { throw undecodable(PostgresResult.int64(cells[0]), at: index) }
            guard hasTransientDefaults else { return }
            let defaults = entity.defaultValues
            for index in decoders.count..<defaults.count where !defaults[index].isNull { valueLayout.store(base, index, defaults[index]) }
        }

        func snapshot(_ row: Int32) throws(SkerryError) -> RowSnapshot {
            RowSnapshot(objectID: objectID(row), version: version(row), values: try values(row), relationships: relationships(row))
        }

        private func undecodable(_ primaryKey: Int64, at index: Int) -> SkerryError {
            PostgresStore.undecodable(entity, entity.attributes[index], primaryKey: primaryKey)
        }
    }

    /// Decodes row `row` of a result made from `entityLayout.selectRows` (for a single row; many
    /// rows share one ``RowDecoder``).
    func decodeRow(
        _ result: PostgresResult, _ row: Int32, _ entity: EntityDescription, _ entityLayout: SQLiteEntityLayout
    ) throws(SkerryError) -> RowSnapshot {
        try RowDecoder(result, entity, entityLayout, layout).snapshot(row)
    }

    // MARK: Queries

    /// The transaction of a read of several statements or with raw SQL: one snapshot for all its
    /// statements (whatever the server's `default_transaction_isolation`), and nothing written.
    static let readSnapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

    /// Runs a read with the store's error mapping. A read of several statements (`snapshot`: a
    /// family's IDs, then each entity's rows) and a read whose predicate holds raw SQL run in a
    /// repeatable-read, read-only transaction (``readSnapshot``): every statement sees the same
    /// committed rows, and a condition cannot write. The conditions' shape and parameter count
    /// are checked first.
    func read<T>(
        _ entity: EntityDescription, predicate: ResolvedPredicate?, snapshot: Bool = false,
        _ body: (PostgresConnection) throws -> T
    ) throws(SkerryError) -> T {
        let conditions = try Self.checkRawConditions(predicate)
        return try withConnection(entity) { connection in
            if !conditions.isEmpty { try validateRawConditions(conditions, connection) }
            guard snapshot || !conditions.isEmpty else { return try body(connection) }
            try connection.execute(Self.readSnapshot)
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
        if layout.readsFamily(query) { return try fetchFamilyRows(query) }
        let entityLayout = try layout.of(query.entity)
        let sql = SQLBuilder.query(entityLayout.selectRows, query, layout: layout, dialect: .postgres)
        let storeLayout = layout
        return try read(query.entity, predicate: query.predicate) { connection in
            let result = try connection.query(sql.text, sql.bindings)
            let decoder = RowDecoder(result, query.entity, entityLayout, storeLayout)
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(Int(result.rowCount))
            for row in 0..<result.rowCount { rows.append(try decoder.snapshot(row)) }
            return rows
        }
    }

    func forEachRow(
        _ query: StoreQuery, reserve: (Int) -> Void, _ makeStorage: (consuming ObjectID) -> UnsafeMutableRawPointer,
        _ body: (Int64, UnsafeMutableRawPointer, [RelationshipValue]) -> Void
    ) throws(SkerryError) {
        if layout.readsFamily(query) {
            // Each row decoded as its own entity, read by key after the family's IDs.
            forEachRow(of: try fetchFamilyRows(query), reserve: reserve, makeStorage, body)
            return
        }
        let entityLayout = try layout.of(query.entity)
        let sql = SQLBuilder.query(entityLayout.selectRows, query, layout: layout, dialect: .postgres)
        let storeLayout = layout
        let reading = rowReadings[ObjectIdentifier(query.entity)]
        try read(query.entity, predicate: query.predicate) { connection in
            let result = try connection.query(sql.text, sql.bindings)
            let decoder = RowDecoder(result, query.entity, entityLayout, storeLayout, reading: reading)
            reserve(Int(result.rowCount))
            // An entity without relationships (the usual case) hands every row this one empty
            // array, borrowed: no release per row.
            let none: [RelationshipValue] = []
            // The cells point into the result: it lives until the last row is read.
            try withExtendedLifetime(result) {
                for row in 0..<result.rowCount {
                    let cells = result.cells(row)
                    // The ID goes to `makeStorage` (taken, not copied).
                    let storage = makeStorage(decoder.objectID(cells))
                    try decoder.read(cells, into: storage)
                    if decoder.hasRelationships {
                        body(decoder.version(cells), storage, decoder.readRelationships(row))
                    } else {
                        body(decoder.version(cells), storage, none)
                    }
                }
            }
        }
    }

    /// `column = ANY(?::bigint[])`: one prepared statement for any number of keys, bound as one
    /// binary `bigint[]` (``ParameterWriter/append(keys:)``).
    static func inKeys(_ column: String) -> String { SQLDialect.postgres.inKeys(column) }

    func fetchRows(_ entity: EntityDescription, primaryKeys: [Int64]) throws(SkerryError) -> [RowSnapshot] {
        guard !primaryKeys.isEmpty else { return [] }
        let entityLayout = try layout.of(entity)
        let sql = entityLayout.selectRows + " WHERE " + Self.inKeys(SQLBuilder.primaryKeyColumn)
        let storeLayout = layout
        return try withConnection(entity) { connection in
            let result = try connection.query(sql) { try $0.append(keys: primaryKeys) }
            let decoder = RowDecoder(result, entity, entityLayout, storeLayout)
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(Int(result.rowCount))
            for row in 0..<result.rowCount { rows.append(try decoder.snapshot(row)) }
            return rows
        }
    }

    func fetchRelated(_ entity: EntityDescription, relationship: Int, sourceKeys: [Int64]) throws(SkerryError) -> [Int64: [ObjectID]] {
        guard !sourceKeys.isEmpty,
            let (sql, destination, hasEntityColumn) = try layout.relatedQuery(entity, relationship: relationship, dialect: .postgres)
        else { return [:] } // a transient relationship relates nothing in the store
        let storeLayout = layout
        let space = try layout.of(destination).spaces!.own
        return try withConnection(entity) { connection in
            let result = try connection.query(sql) { try $0.append(keys: sourceKeys) }
            var related: [Int64: [ObjectID]] = [:]
            for row in 0..<result.rowCount {
                // A destination with sub-entities: the third column names each related row's entity.
                let rowSpace = hasEntityColumn ? storeLayout.space(code: result.int64(row, 2)) ?? space : space
                related[result.int64(row, 0), default: []].append(ObjectID(space: rowSpace, key: result.int64(row, 1)))
            }
            return related
        }
    }

    func fetchObjectIDs(_ query: StoreQuery) throws(SkerryError) -> [ObjectID] {
        if layout.readsFamily(query) {
            return try read(query.entity, predicate: query.predicate) { connection in try fetchFamilyObjectIDs(query, connection) }
        }
        let head = "SELECT \(SQLBuilder.quote(SQLBuilder.primaryKeyColumn)) FROM \(SQLBuilder.quote(query.entity.name))"
        let sql = SQLBuilder.query(head, query, layout: layout, dialect: .postgres)
        let space = identity.space(for: query.entity, temporary: false)
        return try read(query.entity, predicate: query.predicate) { connection in
            let result = try connection.query(sql.text, sql.bindings)
            return (0..<result.rowCount).map { ObjectID(space: space, key: result.int64($0, 0)) }
        }
    }

    func count(_ query: StoreQuery) throws(SkerryError) -> Int {
        let inner = SQLBuilder.query(
            "SELECT 1 FROM \(layout.readSource(query))", query, layout: layout,
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
            + " FROM \(layout.readSource(query))"
        let sql = SQLBuilder.query(head, query, layout: layout, dialect: .postgres)
        return try read(entity, predicate: query.predicate) { connection in
            let result = try connection.query(sql.text, sql.bindings)
            // A transient attribute has no column (NULL in its place): it reads as its default.
            let decoders = result.decoders(attributeIndexes.map { entity.attributeTypes[$0] }, from: 1)
            var rows: [[AttributeValue]] = []
            rows.reserveCapacity(Int(result.rowCount))
            for row in 0..<result.rowCount {
                var values: [AttributeValue] = []
                values.reserveCapacity(attributeIndexes.count)
                for (position, index) in attributeIndexes.enumerated() {
                    if index >= entity.storedAttributeCount {
                        values.append(entity.defaultValues[index])
                    } else if let value = result.value(row, Int32(position + 1), decoders[position]) {
                        values.append(value)
                    } else {
                        throw Self.undecodable(entity, entity.attributes[index], primaryKey: result.int64(row, 0))
                    }
                }
                rows.append(values)
            }
            return rows
        }
    }
}
