import CSQLiteRaw

/// The limit: the SQLite C API with one prepared statement and one transaction.
struct RawSQLite {
    let db: OpaquePointer

    init() {
        var handle: OpaquePointer?
        sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        db = handle!
        exec("CREATE TABLE item (id INTEGER PRIMARY KEY, i0 INTEGER, i1 INTEGER, i2 INTEGER, i3 INTEGER, i4 INTEGER, i5 INTEGER, i6 INTEGER, i7 INTEGER, i8 INTEGER, i9 INTEGER)")
    }

    func close() { sqlite3_close_v2(db) }

    func exec(_ sql: String) {
        precondition(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    }

    func insert(_ count: Int) {
        exec("BEGIN")
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT INTO item (i0, i1, i2, i3, i4, i5, i6, i7, i8, i9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &statement, nil)
        for row in 0..<count {
            for column in 0..<10 { sqlite3_bind_int64(statement, Int32(column + 1), Int64(row + column)) }
            precondition(sqlite3_step(statement) == SQLITE_DONE)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec("COMMIT")
    }

    struct Item { var id, i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int64 }

    func fetchAll() -> [Item] {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT id, i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 FROM item", -1, &statement, nil)
        var items: [Item] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let s = statement
            items.append(Item(id: sqlite3_column_int64(s, 0), i0: sqlite3_column_int64(s, 1), i1: sqlite3_column_int64(s, 2),
                              i2: sqlite3_column_int64(s, 3), i3: sqlite3_column_int64(s, 4), i4: sqlite3_column_int64(s, 5),
                              i5: sqlite3_column_int64(s, 6), i6: sqlite3_column_int64(s, 7), i7: sqlite3_column_int64(s, 8),
                              i8: sqlite3_column_int64(s, 9), i9: sqlite3_column_int64(s, 10)))
        }
        sqlite3_finalize(statement)
        return items
    }
}
