import Foundation

/// A store kept in a SQLite database: one table per entity, a metadata table, one writer
/// connection and a set of readers (see ``ConnectionPool``).
///
/// Each entity's table has an `INTEGER PRIMARY KEY` column `_pk`, assigned by the store from a
/// per-entity sequence so that keys are never reused (an old ``ObjectID`` can never name a new
/// row), a `_version` column for optimistic locking, and one column per attribute.
final class SQLiteStore: ObjectStore {
    let identity: StoreIdentity
    let storeDescription: StoreDescription
    /// The entities this store holds.
    let entities: [EntityDescription]
    /// The model.
    let model: ObjectModel
    /// Where each entity's relationships are kept, and the SQL of its rows.
    let layout: SQLiteStoreLayout
    /// The statements of a save, in SQLite's dialect.
    let planner: StoreWritePlanner
    let pool: ConnectionPool
    /// Whether saves and batch deletes are recorded in the store's persistent history
    /// (SQLiteStore+History.swift).
    let tracksPersistentHistory: Bool
    /// Why a store opened for writing refuses writes: it tracks persistent history and was opened
    /// without the option (``checkWritable()``); nil otherwise.
    let historyReadOnlyReason: String?

    /// Opens (creating if needed) the store, creates or migrates its schema, and returns it.
    /// - Parameters:
    ///   - description: where and how.
    ///   - model: the model; its version hash is recorded in the store.
    ///   - entities: the entities of `model` this store holds.
    /// - Throws: ``SkerryError/Code/storeLoadFailed`` when the file cannot be opened or is not a
    ///   Skerry store; ``SkerryError/Code/modelMismatch`` when the store was written with a model
    ///   that cannot be migrated automatically; ``SkerryError/Code/migrationWouldLoseData`` when
    ///   the data does not fit the new model. The store file is never deleted or rebuilt.
    ///   - events: where the store reports its load, migration steps and (when traced) statements.
    init(
        description: StoreDescription, model: ObjectModel, entities: [EntityDescription],
        events: EventHub? = nil
    ) throws(SkerryError) {
        let started = ContinuousClock.now
        self.storeDescription = description
        self.entities = entities
        self.model = model
        try StoreSchema.checkDestinationsHeld(entities, description)
        let location: DatabaseLocation
        switch description.kind {
        case .postgres:
            throw SkerryError(
                .storeLoadFailed,
                "A PostgreSQL store description is made with StoreDescription.postgres(_:) of the SkerryPostgres product; this one has no PostgreSQL connection."
            )
        case .inMemory where description.isReadOnly:
            throw SkerryError(.storeLoadFailed, "An in-memory store cannot be read-only: it starts empty.")
        case .inMemory:
            location = .memory
        case .sqlite where description.isReadOnly:
            guard let url = description.url, url.isFileURL, FileManager.default.fileExists(atPath: url.path) else {
                throw SkerryError(.storeLoadFailed, "\(description) is read-only and does not exist; a read-only store is never created.")
            }
            location = .file(url.path)
        case .sqlite:
            guard let url = description.url, url.isFileURL else {
                throw SkerryError(
                    .storeLoadFailed, "A SQLite store description needs a file URL; got \(description.url?.absoluteString ?? "none").")
            }
            do {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw SkerryError(.storeLoadFailed, "Cannot create the folder of \(url.path): \(error.localizedDescription)")
            }
            location = .file(url.path)
            try Self.migrateStoreFile(url, description: description, model: model, entities: entities, events: events)
        }
        do {
            pool = try ConnectionPool(
                location: location, settings: description.connectionSettings,
                counters: StoreCounters(events: events, store: description))
        } catch {
            throw SkerryError(.storeLoadFailed, "Cannot open \(description): \(error.message)", sqlite: error)
        }
        var unstored: Set<String> = []
        let prepared =
            description.isReadOnly
            ? try Self.checkSchema(pool: pool, description: description, model: model, entities: entities, unstored: &unstored)
            : try Self.prepareSchema(pool: pool, description: description, model: model, entities: entities)
        let identifier = prepared.identifier
        (tracksPersistentHistory, historyReadOnlyReason) = try Self.prepareHistory(pool: pool, description: description)
        if prepared.outcome == .migrated, let events, events.isObserved {
            events.emit(
                .migrationStep(
                    MigrationStepEvent(
                        store: description, step: 1, stepCount: 1, fromVersionHash: prepared.previousVersionHash,
                        toVersionHash: model.versionHash, summary: "automatic migration", duration: .now - started)))
        }
        do {
            try pool.applyJournalMode()
        } catch {
            throw SkerryError(.storeLoadFailed, "Cannot set the journal mode of \(description): \(error.message)", sqlite: error)
        }
        identity = StoreIdentity(identifier: identifier)
        layout = SQLiteStoreLayout(entities: entities, identity: identity, unstored: unstored)
        planner = StoreWritePlanner(layout: layout, dialect: .sqlite)
        events?.emit(
            .storeLoaded(
                StoreLoadEvent(
                    store: description, outcome: prepared.outcome,
                    modelVersionHash: model.versionHash, duration: .now - started)))
    }

    var statistics: StoreStatistics { pool.counters.snapshot }

    func close() { pool.close() }

    // MARK: Connection access with error mapping

    func read<T>(_ entity: EntityDescription?, _ body: (SQLiteConnection) throws -> T) throws(SkerryError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw Self.mapError(error, entity: entity)
        }
    }

    func writeConnection<T>(_ entity: EntityDescription?, _ body: (SQLiteConnection) throws -> T) throws(SkerryError) -> T {
        do {
            return try pool.write(body)
        } catch {
            throw Self.mapError(error, entity: entity)
        }
    }

    static func mapError(_ error: any Error, entity: EntityDescription?) -> SkerryError {
        SkerryError.converting(error, entityName: entity?.name)
    }

    // MARK: Reading

    /// Decodes the current row of a statement made from `layout.selectRows`: key, version,
    /// attributes, and the to-one relationships kept in foreign-key columns (the others are not
    /// loaded). Complexity: O(attributes + relationships).
    func decodeRow(_ statement: SQLiteStatement, _ entity: EntityDescription, _ layout: SQLiteEntityLayout) throws(SkerryError)
        -> RowSnapshot
    {
        RowSnapshot(
            objectID: decodeObjectID(statement, layout), version: statement.int64(at: 1),
            values: try Self.decodeAttributes(statement, entity),
            relationships: decodeRelationships(statement, entity, layout))
    }

    /// The ID of the current row of a statement made from `layout.selectRows` (column 0).
    @inline(__always)
    func decodeObjectID(_ statement: SQLiteStatement, _ layout: SQLiteEntityLayout) -> ObjectID {
        ObjectID(space: layout.space, key: statement.int64(at: 0))
    }

    /// The relationships of the current row of a statement made from `layout.selectRows`: the
    /// to-ones kept in foreign-key columns, after the attributes; the others are not loaded.
    func decodeRelationships(_ statement: SQLiteStatement, _ entity: EntityDescription, _ layout: SQLiteEntityLayout) -> [RelationshipValue]
    {
        guard !entity.relationships.isEmpty else { return [] }
        var relationships = Array(repeating: RelationshipValue.notLoaded, count: entity.relationships.count)
        var column = Int32(entity.storedAttributeCount + 2)
        let destinations = layout.foreignKeyDestinationSpaces
        for (position, index) in layout.foreignKeyIndexes.enumerated() {
            relationships[index] = .toOne(
                statement.isNull(at: column)
                    ? nil
                    : ObjectID(space: destinations[position], key: statement.int64(at: column)))
            column += 1
        }
        // A destination with sub-entities: the related row's entity follows the foreign keys.
        for position in layout.foreignKeyEntityColumns {
            let index = layout.foreignKeyIndexes[position]
            if case .toOne(let related?) = relationships[index], let space = self.layout.space(code: statement.int64(at: column)) {
                relationships[index] = .toOne(ObjectID(space: space, key: related.key))
            }
            column += 1
        }
        return relationships
    }

    /// Decodes the attribute values of the current row (columns from 2 on) into `base` (storage
    /// laid out by `entity.valueLayout`, holding no value); transient attributes, which the store
    /// does not keep, get their default values. On failure, `base` holds the values decoded
    /// before it, each with its bit set.
    static func decodeAttributes(_ statement: SQLiteStatement, _ entity: EntityDescription, into base: UnsafeMutableRawPointer)
        throws(SkerryError)
    {
        let valueLayout = entity.valueLayout
        let stored = entity.storedAttributeCount
        if let undecodable = statement.decodeValues(into: base, valueLayout, count: stored, from: 2) {
            throw Self.undecodable(entity, entity.attributes[undecodable], primaryKey: statement.int64(at: 0))
        }
        let defaults = entity.defaultValues
        for index in stored..<defaults.count where !defaults[index].isNull { valueLayout.store(base, index, defaults[index]) }
    }

    /// The attribute values of the current row (columns from 2 on); transient attributes, which
    /// the store does not keep, get their default values.
    static func decodeAttributes(_ statement: SQLiteStatement, _ entity: EntityDescription) throws(SkerryError) -> [AttributeValue] {
        let types = entity.attributeTypes
        var values: [AttributeValue] = []
        values.reserveCapacity(types.count)
        for index in 0..<entity.storedAttributeCount {
            guard let value = statement.value(at: Int32(index + 2), as: types[index]) else {
                throw undecodable(entity, entity.attributes[index], primaryKey: statement.int64(at: 0))
            }
            values.append(value)
        }
        if entity.storedAttributeCount < types.count { values += entity.defaultValues[entity.storedAttributeCount...] }
        return values
    }

    static func undecodable(_ entity: EntityDescription, _ attribute: AttributeDescription, primaryKey: Int64) -> SkerryError {
        SkerryError(
            .undecodableValue,
            "The stored value of '\(entity.name).\(attribute.name)' in row \(primaryKey) is not a valid \(attribute.type).",
            entityName: entity.name, key: attribute.name)
    }

    func fetchRows(_ query: StoreQuery) throws(SkerryError) -> [RowSnapshot] {
        if query.includesSubentities, layout.family(query.entity) != nil { return try fetchFamilyRows(query) }
        let entityLayout = try layout.of(query.entity)
        let sql = SQLBuilder.query(entityLayout.selectRows, query, layout: layout)
        return try read(query.entity) { connection in
            try checkRawConditions(query.predicate, connection)
            let statement = try connection.cachedStatement(sql.text)
            try statement.bind(sql.bindings)
            var rows: [RowSnapshot] = []
            while try statement.step() {
                rows.append(try decodeRow(statement, query.entity, entityLayout))
            }
            return rows
        }
    }

    func forEachRow(
        _ query: StoreQuery, reserve: (Int) -> Void, _ makeStorage: (consuming ObjectID) -> UnsafeMutableRawPointer,
        _ body: (Int64, UnsafeMutableRawPointer, [RelationshipValue]) -> Void
    ) throws(SkerryError) {
        // (A statement's rows are counted only by stepping through them: no `reserve` below.)
        if query.includesSubentities, layout.family(query.entity) != nil {
            // Each row decoded as its own entity, read by key after the family's IDs.
            forEachRow(of: try fetchFamilyRows(query), reserve: reserve, makeStorage, body)
            return
        }
        let entityLayout = try layout.of(query.entity)
        let sql = SQLBuilder.query(entityLayout.selectRows, query, layout: layout)
        let entity = query.entity
        // An entity without relationships (the usual case) hands every row this one empty array,
        // borrowed: no release per row.
        let hasRelationships = !entity.relationships.isEmpty
        let none: [RelationshipValue] = []
        try read(entity) { connection in
            try checkRawConditions(query.predicate, connection)
            let statement = try connection.cachedStatement(sql.text)
            try statement.bind(sql.bindings)
            while try statement.step() {
                let objectID = decodeObjectID(statement, entityLayout)
                let rowEntity = objectID.entity // a sub-entity's row: its own
                let storage = makeStorage(objectID)
                try Self.decodeAttributes(statement, rowEntity, into: storage)
                if hasRelationships {
                    body(statement.int64(at: 1), storage, decodeRelationships(statement, entity, entityLayout))
                } else {
                    body(statement.int64(at: 1), storage, none)
                }
            }
        }
    }

    func fetchRows(_ entity: EntityDescription, primaryKeys: [Int64]) throws(SkerryError) -> [RowSnapshot] {
        guard !primaryKeys.isEmpty else { return [] }
        let entityLayout = try layout.of(entity)
        return try read(entity) { connection in
            let statement = try connection.cachedStatement(
                entityLayout.selectRows + " WHERE " + SQLBuilder.inKeys(SQLBuilder.primaryKeyColumn))
            try statement.bind([SQLBuilder.jsonKeys(primaryKeys)])
            var rows: [RowSnapshot] = []
            rows.reserveCapacity(primaryKeys.count)
            while try statement.step() {
                rows.append(try decodeRow(statement, entity, entityLayout))
            }
            return rows
        }
    }

    func fetchRelated(_ entity: EntityDescription, relationship: Int, sourceKeys: [Int64]) throws(SkerryError) -> [Int64: [ObjectID]] {
        guard !sourceKeys.isEmpty,
            let (sql, destination, hasEntityColumn) = try layout.relatedQuery(entity, relationship: relationship, dialect: .sqlite)
        else { return [:] } // a transient relationship: in memory only, the store keeps no member
        let storeLayout = layout
        let space = try layout.of(destination).space
        return try read(entity) { connection in
            let statement = try connection.cachedStatement(sql)
            try statement.bind([SQLBuilder.jsonKeys(sourceKeys)])
            var related: [Int64: [ObjectID]] = [:]
            while try statement.step() {
                // A destination with sub-entities: the third column names each related row's entity.
                let rowSpace = hasEntityColumn ? storeLayout.space(code: statement.int64(at: 2)) ?? space : space
                related[statement.int64(at: 0), default: []].append(ObjectID(space: rowSpace, key: statement.int64(at: 1)))
            }
            return related
        }
    }

    func fetchObjectIDs(_ query: StoreQuery) throws(SkerryError) -> [ObjectID] {
        if query.includesSubentities, layout.family(query.entity) != nil {
            return try read(query.entity) { connection in try fetchFamilyObjectIDs(query, connection) }
        }
        let head = "SELECT \(SQLBuilder.quote(SQLBuilder.primaryKeyColumn)) FROM \(SQLBuilder.quote(query.entity.name))"
        let sql = SQLBuilder.query(head, query, layout: layout)
        let space = try layout.of(query.entity).space
        return try read(query.entity) { connection in
            try checkRawConditions(query.predicate, connection)
            let statement = try connection.cachedStatement(sql.text)
            try statement.bind(sql.bindings)
            var objectIDs: [ObjectID] = []
            while try statement.step() { objectIDs.append(ObjectID(space: space, key: statement.int64(at: 0))) }
            return objectIDs
        }
    }

    func count(_ query: StoreQuery) throws(SkerryError) -> Int {
        let inner = SQLBuilder.query("SELECT 1 FROM \(readSource(query))", query, layout: layout, ordered: false)
        let text = "SELECT count(*) FROM (\(inner.text))"
        return try read(query.entity) { connection in
            try checkRawConditions(query.predicate, connection)
            return Int(try connection.scalarInt64(text, inner.bindings) ?? 0)
        }
    }

    func fetchColumns(_ query: StoreQuery, attributeIndexes: [Int]) throws(SkerryError) -> [[AttributeValue]] {
        let entity = query.entity
        // A transient attribute has no column: it reads as its default value.
        let columns = attributeIndexes.map {
            $0 < entity.storedAttributeCount ? SQLBuilder.quote(entity.attributes[$0].name) : "NULL"
        }
        let head =
            "SELECT \(SQLBuilder.quote(entity.name)).\(SQLBuilder.quote(SQLBuilder.primaryKeyColumn)), "
            + columns.map { $0 == "NULL" ? $0 : "\(SQLBuilder.quote(entity.name)).\($0)" }.joined(separator: ", ")
            + " FROM \(readSource(query))"
        let sql = SQLBuilder.query(head, query, layout: layout)
        return try read(entity) { connection in
            try checkRawConditions(query.predicate, connection)
            let statement = try connection.cachedStatement(sql.text)
            try statement.bind(sql.bindings)
            var rows: [[AttributeValue]] = []
            while try statement.step() {
                var row: [AttributeValue] = []
                row.reserveCapacity(attributeIndexes.count)
                for (position, index) in attributeIndexes.enumerated() {
                    let attribute = entity.attributes[index]
                    if index >= entity.storedAttributeCount {
                        row.append(attribute.defaultValue)
                        continue
                    }
                    guard let value = statement.value(at: Int32(position + 1), as: attribute.type) else {
                        throw Self.undecodable(entity, attribute, primaryKey: statement.int64(at: 0))
                    }
                    row.append(value)
                }
                rows.append(row)
            }
            return rows
        }
    }
}
