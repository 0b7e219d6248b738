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
        sqlite3_create_function_v2(
            handle, "skerry_list_value", 1,
            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
            nil, listValue, nil, nil, nil)
    }
}

/// `skerry_list_value(item)`: an item of a long `isIn` list as `SQLDialect.valueList` wrote it
/// into JSON, back in the form the value has as a parameter: an integer as it is; text tagged
/// `r` and 16 hexadecimal digits, the double of that bit pattern; `b` and hexadecimal digits, that
/// blob; `t` and text, that text. Anything else is NULL (which matches nothing).
private let listValue: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, arguments in
    guard let argument = arguments?[0] else { return sqlite3_result_null(context) }
    switch sqlite3_value_type(argument) {
    case SQLITE_INTEGER:
        sqlite3_result_int64(context, sqlite3_value_int64(argument))
    case SQLITE_TEXT:
        guard let pointer = sqlite3_value_text(argument) else { return sqlite3_result_null(context) }
        let item = UnsafeBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(argument)))
        guard let tag = item.first else { return sqlite3_result_null(context) }
        let body = item.dropFirst()
        switch tag {
        case UInt8(ascii: "r"):
            guard body.count == 16, let bits = UInt64(String(decoding: body, as: UTF8.self), radix: 16) else {
                return sqlite3_result_null(context)
            }
            sqlite3_result_double(context, Double(bitPattern: bits))
        case UInt8(ascii: "b"):
            guard body.count % 2 == 0, let bytes = bytes(fromHex: body) else { return sqlite3_result_null(context) }
            guard !bytes.isEmpty else { return sqlite3_result_zeroblob(context, 0) }
            bytes.withUnsafeBytes {
                sqlite3_result_blob64(context, $0.baseAddress, UInt64($0.count), skerry_sqlite_transient())
            }
        case UInt8(ascii: "t"):
            // The text after the tag (a non-NULL pointer even when empty: SQLite takes NULL for NULL).
            let text = UnsafeRawPointer(pointer + 1).assumingMemoryBound(to: CChar.self)
            sqlite3_result_text64(context, text, UInt64(body.count), skerry_sqlite_transient(), UInt8(SQLITE_UTF8))
        default:
            sqlite3_result_null(context)
        }
    default:
        sqlite3_result_null(context)
    }
}

/// The bytes of pairs of hexadecimal digits; nil for any other character.
private func bytes(fromHex digits: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8]? {
    func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = digits.startIndex
    while index < digits.endIndex {
        guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
        index += 2
    }
    return bytes
}
