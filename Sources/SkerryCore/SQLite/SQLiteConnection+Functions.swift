import CSQLite

/// The text of an SQL function argument, NUL characters included; nil for NULL.
private func text(_ value: OpaquePointer?) -> String? {
    guard let pointer = sqlite3_value_text(value) else { return nil }
    let count = Int(sqlite3_value_bytes(value))
    return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
}

extension SQLiteConnection {
    /// Registers the SQL functions the store's generated SQL relies on.
    ///
    /// `skerry_string_match(op, options, value, pattern)` returns 1 when `value` matches `pattern`
    /// under ``StringOperator`` `op` and ``StringComparisonOptions`` `options`, 0 when it does not,
    /// and NULL when `value` is NULL; it is the same code that evaluates predicates in memory.
    func registerFunctions() {
        let match: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
            context, _, arguments in
            guard let arguments,
                let value = text(arguments[2]),
                let pattern = text(arguments[3]),
                let op = StringOperator(rawValue: Int(sqlite3_value_int64(arguments[0])))
            else {
                sqlite3_result_null(context)
                return
            }
            let options = StringComparisonOptions(rawValue: Int(sqlite3_value_int64(arguments[1])))
            sqlite3_result_int(context, StringMatching.matches(value, op, pattern, options) ? 1 : 0)
        }
        sqlite3_create_function_v2(
            handle, "skerry_string_match", 4,
            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
            nil, match, nil, nil, nil)
    }
}
