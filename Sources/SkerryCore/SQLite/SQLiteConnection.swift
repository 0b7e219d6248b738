import CSQLite
import Foundation

/// One SQLite database connection with its cache of prepared statements.
///
/// A connection is not thread-safe and is deliberately not `Sendable`: it is reached only through
/// ``ConnectionPool``, inside the closure that received it, while the pool holds its lock.
final class SQLiteConnection {
    /// The raw `sqlite3*` handle.
    let handle: OpaquePointer
    /// Prepared statements kept for reuse, keyed by their SQL text.
    private var statementCache: [String: SQLiteStatement] = [:]
    /// Where this connection's statements count their executions (nil: not counted).
    let counters: StoreCounters?
    /// Beyond this many cached statements the cache is emptied, so that statements built for
    /// one-off SQL cannot grow it without bound. `IN` lists are padded to a few lengths
    /// (`SQLBuilder.paddedList`), so that varying lists do not churn it.
    private static let statementCacheLimit = 256
    /// Raw SQL conditions already checked on this connection (entity name, NUL, text), with their
    /// number of parameters; see `SQLiteStore.checkRawConditions`.
    var checkedConditions: [String: Int] = [:]

    /// Opens a connection.
    /// - Parameters:
    ///   - path: a file path, or `":memory:"`.
    ///   - readOnly: open with `SQLITE_OPEN_READONLY`.
    ///   - immutable: open the file as immutable (SQLite's `immutable=1`): no locks and no side
    ///     files, for a file nobody can change (read-only media). Implies `readOnly`.
    ///   - busyTimeout: how long a statement waits for a lock held by another connection.
    init(
        path: String, readOnly: Bool, immutable: Bool = false, busyTimeout: TimeInterval,
        counters: StoreCounters? = nil
    ) throws(SQLiteError) {
        self.counters = counters
        var db: OpaquePointer?
        let readOnly = readOnly || immutable
        let path = immutable ? Self.uri(path, query: "immutable=1") : path
        // NOMUTEX: the pool serializes all use of a connection, so SQLite's own mutex is not needed.
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard let db else {
            throw SQLiteError(extendedResultCode: rc, message: "cannot open \(path): out of memory")
        }
        guard rc == SQLITE_OK else {
            let error = SQLiteError(
                extendedResultCode: sqlite3_extended_errcode(db),
                message: String(cString: sqlite3_errmsg(db)) + " (\(path))")
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        // Clamped in floating point first: a NaN, negative or huge timeout must not trap.
        let milliseconds = (busyTimeout * 1000).rounded()
        sqlite3_busy_timeout(db, milliseconds > 0 ? Int32(min(milliseconds, Double(Int32.max))) : 0)
        registerFunctions()
    }

    /// The most parameters a statement may have on this connection (SQLite's default is 32,766;
    /// builds of the library may set another).
    var parameterLimit: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) }

    /// A `file:` URI for `path` with `query`, the characters SQLite's URI parser gives a meaning
    /// (`%`, `?`, `#`) escaped.
    static func uri(_ path: String, query: String) -> String {
        var escaped = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "file:" + escaped + "?" + query
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The error SQLite reports for the last failed call on this connection.
    func lastError(sql: String?) -> SQLiteError {
        SQLiteError(
            extendedResultCode: sqlite3_extended_errcode(handle),
            message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// Runs one or more SQL statements that take no parameters (DDL, pragmas, transaction control).
    func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let start = counters?.traceStart
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if let start { counters?.traceFinished(sql, start: start, rowsRead: 0, rowsWritten: 0) }
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            throw SQLiteError(extendedResultCode: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// Returns the prepared statement for `sql`, preparing it on first use.
    ///
    /// The statement comes back reset with its bindings cleared. Complexity: O(1) amortized.
    func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try SQLiteStatement(connection: self, sql: sql)
        // A statement not kept is finalized when its last user lets go of it.
        guard SQLBuilder.keepsPrepared(parameterCount: statement.parameterCount) else { return statement }
        if statementCache.count >= Self.statementCacheLimit { statementCache.removeAll() }
        statementCache[sql] = statement
        return statement
    }

    /// How many prepared statements the connection keeps.
    var cachedStatementCount: Int { statementCache.count }

    /// Runs a query that returns one integer (a count, a maximum) and resets the statement, so that
    /// it holds no read cursor afterwards. Returns nil when the query returns no row or NULL.
    func scalarInt64(_ sql: String, _ bindings: [AttributeValue] = []) throws(SQLiteError) -> Int64? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// Whether the database has a table named `name` (the store's own tables, a store's metadata).
    func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        try scalarInt64("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.string(name)]) ?? 0 > 0
    }

    /// Number of rows changed by the most recent INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the most recent successful INSERT.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`), committing if it returns and rolling
    /// back if it throws, so that a failure leaves the database exactly as it was.
    func writeTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            resetBusyStatements()
            try execute("COMMIT")
            return result
        } catch {
            resetBusyStatements()
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` in a read transaction, so that all its statements see one snapshot.
    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        if isInTransaction { return try body() }
        try execute("BEGIN DEFERRED")
        defer {
            resetBusyStatements()
            if isInTransaction { try? execute("COMMIT") }
        }
        return try body()
    }

    /// Resets every statement of the connection that has not run to completion. A statement left
    /// mid-way (a single-row query stepped once) would otherwise keep its read snapshot open past
    /// the end of the transaction, and the connection would go on seeing old data.
    /// Complexity: O(prepared statements of the connection).
    func resetBusyStatements() {
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            if sqlite3_stmt_busy(current) != 0 { sqlite3_reset(current) }
            statement = sqlite3_next_stmt(handle, current)
        }
    }
}
