/// Stores written before a stored relationship whose inverse is transient was stored: Skerry
/// kept neither side of such a pair, so the store lacks the join table or foreign-key column
/// that the relationship has now (``RelationshipLayout``). Nothing of it was ever written, so
/// adding the empty storage loses nothing; the load adds it before anything reads the store.
extension StoreSchema {
    /// The join tables and foreign-key columns that the layout of `stored` keeps for a
    /// relationship whose inverse the schema does not record (a transient inverse), and that the
    /// store lacks. Reads only; costs nothing for a schema without such relationships.
    package func missingRelationshipStorage(
        _ stored: StoredSchema, _ connection: some StoreSQLConnection
    ) throws -> (joinTables: [String], columns: [(table: String, column: String)]) {
        let byName = Dictionary(stored.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var candidates: [(entity: String, relationship: String)] = []
        for entity in stored.entities {
            for relationship in entity.relationships {
                guard let inverse = relationship.inverse, byName[relationship.destination]?.relationship(named: inverse) == nil
                else { continue }
                candidates.append((entity.name, relationship.name))
            }
        }
        guard !candidates.isEmpty else { return ([], []) }
        let layout = RelationshipLayout(schema: stored)
        var joinTables: [String] = [], columns: [(table: String, column: String)] = []
        var tableColumns: [String: Set<String>] = [:]
        for (entity, relationship) in candidates {
            switch layout.storage[entity]?[relationship] {
            case .joinTable(let table, _, _, _)?:
                if !joinTables.contains(table), try !tableExists(table, connection) { joinTables.append(table) }
            case .foreignKey(let column)?:
                if tableColumns[entity] == nil { tableColumns[entity] = try columnNames(entity, connection) }
                if !tableColumns[entity]!.contains(storedColumnName(column)) {
                    columns.append((entity, column))
                    tableColumns[entity]!.insert(storedColumnName(column))
                }
            default:
                continue
            }
        }
        return (joinTables, columns)
    }

    /// Adds what ``missingRelationshipStorage(_:_:)`` finds missing (empty: nothing was ever
    /// stored there), with the foreign-key indexes of the tables of `entities` that got a
    /// column when given (the store's current entities, of the same schema). Returns whether it
    /// added anything.
    @discardableResult
    package func addMissingRelationshipStorage(
        _ stored: StoredSchema, entities: [EntityDescription]?, _ connection: some StoreSQLConnection
    ) throws -> Bool {
        let missing = try missingRelationshipStorage(stored, connection)
        guard !missing.joinTables.isEmpty || !missing.columns.isEmpty else { return false }
        let q = SQLBuilder.quote
        for table in missing.joinTables { try createJoinTable(table, connection) }
        for (table, column) in missing.columns {
            try connection.execute("ALTER TABLE \(q(table)) ADD COLUMN \(q(column)) \(dialect.keyType)")
        }
        if let entities, !missing.columns.isEmpty {
            let extraColumns = RelationshipLayout(entities: entities).extraColumns
            for entity in entities where missing.columns.contains(where: { $0.table == entity.name }) {
                try syncIndexes(entity, extraColumns: extraColumns[entity.name] ?? [], connection)
            }
        }
        return true
    }

    private func tableExists(_ table: String, _ connection: some StoreSQLConnection) throws -> Bool {
        let sql =
            dialect == .sqlite
            ? "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
            : "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
        return try connection.scalarInt64(sql, [.string(dialect == .postgres ? StoreIndexes.storedName(table) : table)]) ?? 0 > 0
    }

    private func columnNames(_ table: String, _ connection: some StoreSQLConnection) throws -> Set<String> {
        let sql =
            dialect == .sqlite
            ? "SELECT name FROM pragma_table_info(?)"
            : "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?"
        let name = dialect == .postgres ? StoreIndexes.storedName(table) : table
        return Set(try connection.textRows(sql, [.string(name)]).map { $0[0] })
    }

    /// A column's name as the database keeps it (PostgreSQL keeps the first bytes of a long one).
    private func storedColumnName(_ column: String) -> String {
        dialect == .postgres ? StoreIndexes.storedName(column) : column
    }
}
