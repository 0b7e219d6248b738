/// The limit for the PostgreSQL store: libpq directly, sending the statements the store sends for
/// each scenario (read off the server's statement log), with the same protocol choices — named
/// prepared statements, binary parameters and results, pipeline mode in batches of 512 for bulk
/// writes, one transaction per save — and rows read into Swift structs. What it leaves out is
/// everything a context does: objects, the identity map, change tracking, snapshots.
final class PostgresRawBench<Item: PostgresShape> {
    let connection: PGConnection
    let table: String
    let selectRows: String

    init(connectionString: String) {
        connection = PGConnection(connectionString)
        table = "\"\(Item.entityName)\""
        selectRows = "SELECT \"_pk\", \"_version\", \(Item.quotedColumnList) FROM \(table)"
        // The store's table: a key, a version for optimistic locking, the attributes; keys from a sequence.
        let columns = zip(Item.columns, Item.postgresColumnTypes).map { "\"\($0.name)\" \($1)" }
        connection.exec(
            """
            CREATE TABLE \(table) ("_pk" bigint PRIMARY KEY, "_version" bigint NOT NULL, \(columns.joined(separator: ", ")));
            CREATE SEQUENCE "\(Item.entityName)_pk_seq"
            """)
    }

    static func prepare(_ scenario: Scenario, _ sizes: Sizes, connectionString: String) -> Work {
        let raw = PostgresRawBench(connectionString: connectionString)
        let prefill = sizes.prefill(scenario)
        if prefill > 0 {
            raw.insert(makeItems(prefill))
            // Statements are prepared again inside the timed work, as the store's new connection must.
            raw.connection.exec("DEALLOCATE ALL")
        }
        switch scenario {
        case .insert:
            let items: [Item] = makeItems(sizes.insert)
            return Work({ raw.insert(items) }, verify: { expect(raw.count() == items.count, "pg-raw insert") })
        case .fetch:
            return Work {
                let rows = raw.fetchAll()
                expect(rows.count == sizes.fetch, "pg-raw fetch")
            }
        case .update:
            return Work(
                { expect(raw.updateAll() == sizes.update, "pg-raw update") },
                verify: { expect(raw.sumOfUpdatedColumn() == expectedSum(Item.self, sizes.update), "pg-raw update sum") })
        case .fetchByID:
            let keys = randomSelection(raw.fetchAll().map(\.key), count: sizes.fetchByID)
            raw.connection.exec("DEALLOCATE ALL")
            return Work {
                let items = raw.fetch(keys: keys)
                expect(items.count == keys.count, "pg-raw fetch by ID")
            }
        case .deleteBatch:
            return Work(
                { expect(raw.deleteAll() == sizes.delete, "pg-raw batch delete") },
                verify: { expect(raw.count() == 0, "pg-raw batch delete left rows") })
        case .deleteEach:
            return Work(
                { expect(raw.deleteEach() == sizes.delete, "pg-raw delete each") },
                verify: { expect(raw.count() == 0, "pg-raw delete each left rows") })
        }
    }

    func count() -> Int { Int(connection.scalar("SELECT count(*) FROM \(table)")) }

    func sumOfUpdatedColumn() -> Int64 {
        connection.scalar("SELECT sum(\"\(Item.columns[Item.updatedColumnIndex].name)\") FROM \(table)")
    }

    /// A save of new objects: keys from the sequence (one statement), then the inserts, pipelined,
    /// in one transaction.
    func insert(_ items: [Item]) {
        connection.exec("BEGIN")
        connection.prepare("keys", "SELECT nextval($1::regclass) FROM generate_series(1, $2::integer)", types: [0, PGType.int4])
        var parameters = PGParameters()
        parameters.appendText("\"\(Item.entityName)_pk_seq\"")
        parameters.append(Int32(items.count))
        let keys = connection.execute("keys", &parameters)
        precondition(keys.rowCount == items.count)
        let placeholders = (2...(Item.columns.count + 1)).map { "$\($0)" }.joined(separator: ", ")
        connection.prepare(
            "insert", "INSERT INTO \(table) (\"_pk\", \"_version\", \(Item.quotedColumnList)) VALUES ($1, 1, \(placeholders))",
            types: [PGType.int8] + Item.postgresTypes)
        let checkInserted: (PGResult) -> Void = { expect($0.affectedRows == 1, "pg-raw insert row") }
        connection.pipeline(onResult: checkInserted) { sent in
            for (index, item) in items.enumerated() {
                parameters.removeAll()
                parameters.append(keys.int64(Int32(index), 0))
                item.append(to: &parameters)
                connection.send("insert", &parameters)
                sent()
            }
        }
        connection.exec("COMMIT")
    }

    /// Every row, in key order (as the store's fetch), with its key and version.
    func fetchAll() -> [(key: Int64, version: Int64, item: Item)] {
        let result = connection.prepareAndExecute("select", selectRows + " ORDER BY \(table).\"_pk\"")
        var rows: [(key: Int64, version: Int64, item: Item)] = []
        rows.reserveCapacity(Int(result.rowCount))
        for row in 0..<result.rowCount {
            rows.append((result.int64(row, 0), result.int64(row, 1), Item(result: result, row: row, first: 2)))
        }
        return rows
    }

    /// One round trip per key, with the store's look-up by keys (`= ANY($1::bigint[])`, the keys
    /// bound as an array literal).
    func fetch(keys: [Int64]) -> [Item] {
        connection.prepare("byKeys", selectRows + " WHERE \"_pk\" = ANY($1::bigint[])", types: [PGType.int8Array])
        var items: [Item] = []
        items.reserveCapacity(keys.count)
        var parameters = PGParameters()
        for key in keys {
            parameters.removeAll()
            parameters.appendText("{\(key)}")
            let result = connection.execute("byKeys", &parameters)
            precondition(result.rowCount == 1)
            items.append(Item(result: result, row: 0, first: 2))
        }
        return items
    }

    /// Reads every row, adds 1 to one column of each, and writes it back with the store's
    /// version-checked update, pipelined, in one transaction.
    func updateAll() -> Int {
        var rows = fetchAll()
        let column = Item.columns[Item.updatedColumnIndex].name
        connection.exec("BEGIN")
        connection.prepare(
            "update", "UPDATE \(table) SET \"_version\" = \"_version\" + 1, \"\(column)\" = $1 WHERE \"_pk\" = $2 AND \"_version\" = $3",
            types: [PGType.int8, PGType.int8, PGType.int8])
        var parameters = PGParameters()
        let checkUpdated: (PGResult) -> Void = { expect($0.affectedRows == 1, "pg-raw update row") }
        connection.pipeline(onResult: checkUpdated) { sent in
            for index in rows.indices {
                rows[index].item[keyPath: Item.updatedKeyPath] += 1
                parameters.removeAll()
                parameters.append(rows[index].item[keyPath: Item.updatedKeyPath])
                parameters.append(rows[index].key)
                parameters.append(rows[index].version)
                connection.send("update", &parameters)
                sent()
            }
        }
        connection.exec("COMMIT")
        return rows.count
    }

    /// The store's batch delete of one table with nothing referring to it: one `DELETE`, atomic
    /// by itself (no transaction around it), prepared and run in one round trip.
    func deleteAll() -> Int {
        connection.prepareAndExecute("deleteAll", "DELETE FROM \(table)").affectedRows
    }

    /// Reads every row, then deletes each with the store's version-checked delete, pipelined, in
    /// one transaction.
    func deleteEach() -> Int {
        let rows = fetchAll()
        connection.exec("BEGIN")
        connection.prepare("delete", "DELETE FROM \(table) WHERE \"_pk\" = $1 AND \"_version\" = $2", types: [PGType.int8, PGType.int8])
        var parameters = PGParameters()
        let checkDeleted: (PGResult) -> Void = { expect($0.affectedRows == 1, "pg-raw delete row") }
        connection.pipeline(onResult: checkDeleted) { sent in
            for row in rows {
                parameters.removeAll()
                parameters.append(row.key)
                parameters.append(row.version)
                connection.send("delete", &parameters)
                sent()
            }
        }
        connection.exec("COMMIT")
        return rows.count
    }
}
