import CSQLite

/// What a statement being checked may read: some columns of one table.
private final class ReadPermission {
    let table: String
    let columns: Set<String>
    /// The first thing the statement tried that it may not do.
    var violation: String?

    init(table: String, columns: Set<String>) {
        self.table = table
        self.columns = columns
    }
}

/// What ``SQLiteConnection/prepareReadingOnly(_:table:columns:)`` learned of a statement.
struct CheckedStatement {
    /// The number of its parameters.
    let parameterCount: Int
    /// The names of named or numbered parameters (`:a`, `?2`…); empty when all are plain `?`.
    let namedParameters: [String]
    /// The number of result columns.
    let columnCount: Int
}

/// Why a statement failed the check of ``SQLiteConnection/prepareReadingOnly(_:table:columns:)``.
enum StatementCheckFailure: Error {
    /// SQLite could not prepare it (its message).
    case invalid(SQLiteError)
    /// It reads or does something it may not (what).
    case notAuthorized(String)
    /// Text follows the statement.
    case trailingText
}

extension SQLiteConnection {
    /// Prepares `sql` under SQLite's authorizer, allowing it only to select, call functions and
    /// read `columns` of `table`, then finalizes it. SQLite calls the authorizer for every table
    /// and column a statement reads, in subqueries too, so a statement that passes reads nothing
    /// else.
    func prepareReadingOnly(_ sql: String, table: String, columns: Set<String>) throws(StatementCheckFailure) -> CheckedStatement {
        let permission = ReadPermission(table: table, columns: columns)
        let authorize:
            @convention(c) (
                UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                UnsafePointer<CChar>?, UnsafePointer<CChar>?
            ) -> Int32 = { context, action, first, second, _, _ in
                guard let context else { return SQLITE_DENY }
                let permission = Unmanaged<ReadPermission>.fromOpaque(context).takeUnretainedValue()
                switch action {
                case SQLITE_SELECT, SQLITE_FUNCTION:
                    return SQLITE_OK
                case SQLITE_READ:
                    let table = first.map { String(cString: $0) } ?? ""
                    let column = second.map { String(cString: $0) } ?? ""
                    // An empty column: the table is read without naming one (count(*)).
                    if table == permission.table && (column.isEmpty || permission.columns.contains(column)) { return SQLITE_OK }
                    if permission.violation == nil { permission.violation = "it reads \(table).\(column)" }
                    return SQLITE_DENY
                default:
                    if permission.violation == nil { permission.violation = "it does more than read (SQLite authorizer action \(action))" }
                    return SQLITE_DENY
                }
            }
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let rc = withExtendedLifetime(permission) { () -> Int32 in
            sqlite3_set_authorizer(handle, authorize, Unmanaged.passUnretained(permission).toOpaque())
            defer { sqlite3_set_authorizer(handle, nil, nil) }
            return sqlite3_prepare_v2(handle, sql, -1, &statement, &tail)
        }
        defer { sqlite3_finalize(statement) }
        if let violation = permission.violation { throw .notAuthorized(violation) }
        guard rc == SQLITE_OK, let statement else { throw .invalid(lastError(sql: sql)) }
        if let tail, String(cString: tail).contains(where: { !$0.isWhitespace }) { throw .trailingText }
        let count = sqlite3_bind_parameter_count(statement)
        var names: [String] = []
        if count > 0 {
            for index in 1...count {
                if let name = sqlite3_bind_parameter_name(statement, index) { names.append(String(cString: name)) }
            }
        }
        return CheckedStatement(
            parameterCount: Int(count), namedParameters: names,
            columnCount: Int(sqlite3_column_count(statement)))
    }
}
