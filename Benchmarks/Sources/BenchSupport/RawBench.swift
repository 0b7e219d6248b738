import CSQLiteRaw

/// The limit: the SQLite C API on an in-memory database, one prepared statement per kind of
/// query, one transaction per scenario.
final class RawBench<Item: BenchShape> {
    let db: OpaquePointer

    init() {
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        precondition(status == SQLITE_OK, "cannot open an in-memory database")
        db = handle!
        exec(Item.createTableSQL)
    }

    deinit { sqlite3_close_v2(db) }

    static func prepare(_ scenario: Scenario, _ sizes: Sizes) throws -> Work {
        let raw = RawBench()
        let prefill = sizes.prefill(scenario)
        if prefill > 0 { raw.insert(makeItems(prefill)) }
        switch scenario {
        case .insert:
            let items: [Item] = makeItems(sizes.insert)
            return Work({ raw.insert(items) }, verify: { expect(raw.count() == items.count, "raw insert") })
        case .fetch:
            return Work {
                let items = raw.fetchAll()
                expect(items.count == sizes.fetch, "raw fetch")
            }
        case .update:
            return Work(
                { expect(raw.updateAll() == sizes.update, "raw update") },
                verify: { expect(raw.sumOfUpdatedColumn() == expectedSum(Item.self, sizes.update), "raw update sum") })
        case .fetchByID:
            let ids = randomSelection(raw.allIDs(), count: sizes.fetchByID)
            return Work {
                let items = raw.fetch(ids: ids)
                expect(items.count == ids.count, "raw fetch by ID")
            }
        case .deleteBatch:
            return Work({ raw.exec("DELETE FROM item") }, verify: { expect(raw.count() == 0, "raw batch delete") })
        case .deleteEach:
            return Work(
                { expect(raw.deleteEach() == sizes.delete, "raw delete each") },
                verify: { expect(raw.count() == 0, "raw delete each left rows") })
        }
    }

    func exec(_ sql: String) {
        precondition(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    }

    func statement(_ sql: String) -> OpaquePointer {
        var statement: OpaquePointer?
        precondition(sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
        return statement!
    }

    func count() -> Int {
        let s = statement("SELECT COUNT(*) FROM item")
        defer { sqlite3_finalize(s) }
        precondition(sqlite3_step(s) == SQLITE_ROW)
        return Int(sqlite3_column_int64(s, 0))
    }

    func sumOfUpdatedColumn() -> Int64 {
        let s = statement("SELECT SUM(\(Item.columns[Item.updatedColumnIndex].name)) FROM item")
        defer { sqlite3_finalize(s) }
        precondition(sqlite3_step(s) == SQLITE_ROW)
        return sqlite3_column_int64(s, 0)
    }

    func insert(_ items: [Item]) {
        exec("BEGIN")
        let placeholders = Array(repeating: "?", count: Item.columns.count).joined(separator: ", ")
        let s = statement("INSERT INTO item (\(Item.columnList)) VALUES (\(placeholders))")
        for item in items {
            item.bind(to: s)
            precondition(sqlite3_step(s) == SQLITE_DONE)
            sqlite3_reset(s)
        }
        sqlite3_finalize(s)
        exec("COMMIT")
    }

    func fetchAll() -> [Item] {
        let s = statement("SELECT \(Item.columnList) FROM item")
        var items: [Item] = []
        while sqlite3_step(s) == SQLITE_ROW {
            items.append(Item(statement: s, first: 0))
        }
        sqlite3_finalize(s)
        return items
    }

    func allIDs() -> [Int64] {
        let s = statement("SELECT id FROM item")
        var ids: [Int64] = []
        while sqlite3_step(s) == SQLITE_ROW { ids.append(sqlite3_column_int64(s, 0)) }
        sqlite3_finalize(s)
        return ids
    }

    func fetch(ids: [Int64]) -> [Item] {
        let s = statement("SELECT \(Item.columnList) FROM item WHERE id = ?")
        var items: [Item] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            sqlite3_bind_int64(s, 1, id)
            precondition(sqlite3_step(s) == SQLITE_ROW)
            items.append(Item(statement: s, first: 0))
            sqlite3_reset(s)
        }
        sqlite3_finalize(s)
        return items
    }

    /// Reads every row (ID and values) into structs, adds 1 to one attribute of each, and writes
    /// that column back by ID: the object-by-object update, at its cheapest.
    func updateAll() -> Int {
        exec("BEGIN")
        let select = statement("SELECT id, \(Item.columnList) FROM item")
        var rows: [(id: Int64, item: Item)] = []
        while sqlite3_step(select) == SQLITE_ROW {
            rows.append((sqlite3_column_int64(select, 0), Item(statement: select, first: 1)))
        }
        sqlite3_finalize(select)
        let column = Item.columns[Item.updatedColumnIndex].name
        let update = statement("UPDATE item SET \(column) = ? WHERE id = ?")
        for index in rows.indices {
            rows[index].item[keyPath: Item.updatedKeyPath] += 1
            sqlite3_bind_int64(update, 1, rows[index].item[keyPath: Item.updatedKeyPath])
            sqlite3_bind_int64(update, 2, rows[index].id)
            precondition(sqlite3_step(update) == SQLITE_DONE)
            sqlite3_reset(update)
        }
        sqlite3_finalize(update)
        exec("COMMIT")
        return rows.count
    }

    /// Reads every ID, then deletes the rows one by one.
    func deleteEach() -> Int {
        exec("BEGIN")
        let ids = allIDs()
        let delete = statement("DELETE FROM item WHERE id = ?")
        for id in ids {
            sqlite3_bind_int64(delete, 1, id)
            precondition(sqlite3_step(delete) == SQLITE_DONE)
            sqlite3_reset(delete)
        }
        sqlite3_finalize(delete)
        exec("COMMIT")
        return ids.count
    }
}

/// The version of the SQLite library the raw baseline links (the system's; Skerry and GRDB link it too).
public var sqliteVersion: String { String(cString: sqlite3_libversion()) }
