import CSQLite
import Foundation

/// A prepared statement, owned by one ``SQLiteConnection`` and finalized with it.
///
/// Values are always bound as parameters; the statement text never contains user data.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    /// The connection's handle, for error messages. The connection outlives its statements.
    private let database: OpaquePointer
    /// Where executions are counted (nil: not counted).
    private let counters: StoreCounters?
    /// Whether the statement has been stepped since its last reset, and the rows it returned.
    private var isRunning = false
    private var rowsReturned = 0
    /// When the running execution started, if statements are traced (`isTraced`). The flag is
    /// read first: the optional instant is of a resilient type, copied and checked through its
    /// value witnesses, which untraced executions (nearly all) then never touch.
    private var startedAt: ContinuousClock.Instant?
    private var isTraced = false

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw connection.lastError(sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.database = connection.handle
        self.counters = connection.counters
    }

    /// Records a finished (or abandoned) execution with the store's counters.
    private func finishExecution(changes: Int) {
        guard isRunning else { return }
        isRunning = false
        counters?.record(rowsRead: rowsReturned, rowsWritten: changes)
        if isTraced, let startedAt {
            counters?.traceFinished(sql, start: startedAt, rowsRead: rowsReturned, rowsWritten: changes)
            self.startedAt = nil
            isTraced = false
        }
        rowsReturned = 0
    }

    /// Notes that an execution started (out of line: the first step of each execution only).
    @inline(never)
    private func startExecution() {
        isRunning = true
        if let start = counters?.traceStart {
            startedAt = start
            isTraced = true
        }
    }

    deinit { sqlite3_finalize(handle) }

    /// The number of parameters the statement takes.
    var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    private func check(_ rc: Int32) throws(SQLiteError) {
        if rc != SQLITE_OK {
            throw SQLiteError(
                extendedResultCode: sqlite3_extended_errcode(database),
                message: String(cString: sqlite3_errmsg(database)), sql: sql)
        }
    }

    /// Resets the statement and clears its bindings.
    func reset() {
        finishExecution(changes: 0)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Resets the statement to run again, keeping its bindings: for a loop that binds every
    /// parameter again before each run, where clearing them first would be wasted work.
    func resetKeepingBindings() {
        finishExecution(changes: 0)
        sqlite3_reset(handle)
    }

    /// Clears the bindings (copies of text and blobs the statement holds), without a reset.
    func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// Binds `value` to the parameter at `index` (1-based).
    func bind(_ value: AttributeValue, at index: Int32) throws(SQLiteError) {
        try check(bindResult(value, at: index))
    }

    /// Binds `value` to parameter `index`; returns SQLite's result code.
    private func bindResult(_ value: AttributeValue, at index: Int32) -> Int32 {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .bool(let v): rc = sqlite3_bind_int64(handle, index, v ? 1 : 0)
        case .int(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .double(let v): rc = sqlite3_bind_double(handle, index, v)
        case .decimal(let v): rc = bindText(v.description, at: index)
        case .date(let v): rc = sqlite3_bind_double(handle, index, v.timeIntervalSinceReferenceDate)
        case .string(let v): rc = bindText(v, at: index)
        case .url(let v): rc = bindText(v.absoluteString, at: index)
        case .data(let v): rc = bindBlob(v, at: index)
        case .uuid(let v):
            rc = withUnsafeBytes(of: v.uuid) { bytes in
                sqlite3_bind_blob(handle, index, bytes.baseAddress, 16, skerry_sqlite_transient())
            }
        }
        return rc
    }

    /// Binds `values` to consecutive parameters, the first at `firstIndex` (1-based).
    func bind(_ values: [AttributeValue], from firstIndex: Int32 = 1) throws(SQLiteError) {
        var index = firstIndex
        for value in values {
            try bind(value, at: index)
            index += 1
        }
    }

    /// Binds the first `count` of `values` to consecutive parameters, the first at `firstIndex`,
    /// each read from where it lies (an object's storage) as it is bound: no array is built.
    func bind(_ values: RowValues, count: Int, from firstIndex: Int32) throws(SQLiteError) {
        precondition(count <= values.count, "binding more values than the row has")
        // The result code of the first bind that failed (binding stops there), or SQLITE_OK.
        let storageResult = values.withStorage { base, layout -> Int32 in
            for position in 0..<count {
                let index = firstIndex + Int32(position)
                let rc: Int32
                // Numbers and strings straight from their slots; the rarer forms as values.
                switch layout.slot(at: position) {
                case .integer:
                    if var value = layout.loadInteger(base, position) {
                        if layout.type(at: position) == .boolean { value = value != 0 ? 1 : 0 }
                        rc = sqlite3_bind_int64(handle, index, value)
                    } else {
                        rc = sqlite3_bind_null(handle, index)
                    }
                case .double:
                    rc =
                        layout.loadDouble(base, position).map { sqlite3_bind_double(handle, index, $0) } ?? sqlite3_bind_null(handle, index)
                case .string:
                    rc = layout.loadString(base, position).map { bindText($0, at: index) } ?? sqlite3_bind_null(handle, index)
                case .data, .decimal, .uuid, .url:
                    rc = bindResult(layout.load(base, position), at: index)
                }
                if rc != SQLITE_OK { return rc }
            }
            return SQLITE_OK
        }
        if let storageResult { return try check(storageResult) }
        var index = firstIndex
        for position in 0..<count {
            try bind(values[position], at: index)
            index += 1
        }
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            // An empty buffer may have no base address, which SQLite would bind as NULL.
            guard let base = utf8.baseAddress, utf8.count > 0 else {
                return sqlite3_bind_text(handle, index, "", 0, skerry_sqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text64(handle, index, $0, UInt64(utf8.count), skerry_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
    }

    private func bindBlob(_ data: Data, at index: Int32) -> Int32 {
        if data.isEmpty { return sqlite3_bind_zeroblob(handle, index, 0) }
        return data.withUnsafeBytes { bytes in
            sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count), skerry_sqlite_transient())
        }
    }

    /// Advances to the next row. Returns true when a row is available, false when done.
    func step() throws(SQLiteError) -> Bool {
        if !isRunning { startExecution() }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW {
            rowsReturned += 1
            return true
        }
        if rc == SQLITE_DONE {
            finishExecution(changes: sqlite3_stmt_readonly(handle) == 0 ? Int(sqlite3_changes(database)) : 0)
            return false
        }
        finishExecution(changes: 0)
        let error = SQLiteError(
            extendedResultCode: sqlite3_extended_errcode(database),
            message: String(cString: sqlite3_errmsg(database)), sql: sql)
        sqlite3_reset(handle)
        throw error
    }

    /// Binds `values` and runs the statement to completion.
    func run(_ values: [AttributeValue] = []) throws(SQLiteError) {
        reset()
        try bind(values)
        while try step() {}
    }

    // MARK: Columns

    /// Whether the column at `index` (0-based) of the current row is NULL.
    func isNull(at index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// The column at `index` as a 64-bit integer.
    func int64(at index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// The column at `index` as text.
    func text(at index: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return ValueLayout.string(utf8: UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The column at `index` decoded as a value of an attribute of `type`, or nil when the stored
    /// value has a form that type cannot hold (a corrupt or foreign row).
    func value(at index: Int32, as type: AttributeType) -> AttributeValue? {
        let columnType = sqlite3_column_type(handle, index)
        if columnType == SQLITE_NULL { return .null }
        switch type {
        case .boolean:
            guard columnType == SQLITE_INTEGER else { return nil }
            return .bool(sqlite3_column_int64(handle, index) != 0)
        case .integer16, .integer32, .integer64:
            guard columnType == SQLITE_INTEGER else { return nil }
            let v = sqlite3_column_int64(handle, index)
            return type.integerRange.contains(v) ? .int(v) : nil
        case .float, .double:
            guard columnType == SQLITE_FLOAT || columnType == SQLITE_INTEGER else { return nil }
            return .double(sqlite3_column_double(handle, index))
        case .date:
            guard columnType == SQLITE_FLOAT || columnType == SQLITE_INTEGER else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: sqlite3_column_double(handle, index)))
        case .decimal:
            guard columnType == SQLITE_TEXT, let v = Decimal(string: text(at: index)) else { return nil }
            return .decimal(v)
        case .string:
            guard columnType == SQLITE_TEXT else { return nil }
            return .string(text(at: index))
        case .url:
            guard columnType == SQLITE_TEXT, let v = URL(string: text(at: index)) else { return nil }
            return .url(v)
        case .binary:
            guard columnType == SQLITE_BLOB else { return nil }
            return .data(blob(at: index))
        case .uuid:
            guard columnType == SQLITE_BLOB, sqlite3_column_bytes(handle, index) == 16,
                let pointer = sqlite3_column_blob(handle, index)
            else { return nil }
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: 16)) }
            return .uuid(UUID(uuid: uuid))
        }
    }

    private func blob(at index: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: pointer, count: count)
    }
}

/// The number of columns of a statement's result (for tests and tools).
func sqlite3ColumnCount(_ statement: SQLiteStatement) -> Int32 {
    sqlite3_column_count(statement.handle)
}

extension SQLiteStatement {
    /// Decodes columns `firstColumn...` of the current row into `base`, storage laid out by
    /// `layout` that holds no value yet: column `firstColumn + i` is attribute `i`, for the first
    /// `count` attributes. Integers,
    /// floating-point numbers and strings go straight into their slots, without an intermediate
    /// ``AttributeValue``. Returns the index of the first attribute whose stored value does not
    /// fit its type (the values before it are set), or nil when every one was decoded.
    func decodeValues(into base: UnsafeMutableRawPointer, _ layout: ValueLayout, count: Int, from firstColumn: Int32) -> Int? {
        for index in 0..<count {
            let column = firstColumn + Int32(index)
            // One look-up of the column's value, then its type and contents read from it: the
            // `sqlite3_column_*` calls would each look the column up again. The value is
            // "unprotected" (SQLite takes no mutex to read it): the connection is opened with
            // SQLITE_OPEN_NOMUTEX and used by one thread at a time (ConnectionPool), so there is
            // no mutex to take anyway. It stays valid until the statement steps again.
            let value = sqlite3_column_value(handle, column)
            let columnType = sqlite3_value_type(value)
            if columnType == SQLITE_NULL { continue }
            let type = layout.type(at: index)
            switch type {
            case .integer64, .integer32, .integer16:
                guard columnType == SQLITE_INTEGER else { return index }
                let integer = sqlite3_value_int64(value)
                guard type == .integer64 || type.integerRange.contains(integer) else { return index }
                layout.initializeInteger(base, index, integer)
            case .boolean:
                guard columnType == SQLITE_INTEGER else { return index }
                layout.initializeInteger(base, index, sqlite3_value_int64(value) != 0 ? 1 : 0)
            case .double, .float, .date:
                guard columnType == SQLITE_FLOAT || columnType == SQLITE_INTEGER else { return index }
                layout.initializeDouble(base, index, sqlite3_value_double(value))
            case .string:
                guard columnType == SQLITE_TEXT else { return index }
                let text = sqlite3_value_text(value)
                let bytes = Int(sqlite3_value_bytes(value))
                layout.initializeString(
                    base, index, text.map { ValueLayout.string(utf8: UnsafeRawBufferPointer(start: $0, count: bytes)) } ?? "")
            case .decimal, .url, .binary, .uuid:
                guard let decoded = self.value(at: column, as: type) else { return index }
                layout.store(base, index, decoded)
            }
        }
        return nil
    }
}
