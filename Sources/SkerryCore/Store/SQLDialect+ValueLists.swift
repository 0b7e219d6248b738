import Foundation

/// Long `isIn` lists bound as one parameter: a list of a parameter per value would pass the
/// stores' limits on a statement's parameters (SQLite: 32,766; PostgreSQL: 65,535), and one
/// statement then serves lists of any length.
///
/// The values keep the form they have as parameters of their own, so that they compare as the
/// short list's do: SQLite reads a JSON array with `json_each`, whose integers and strings are
/// SQLite's own; numbers with a fraction, dates and blobs go through `skerry_list_value`
/// (``SQLiteConnection``'s functions), which turns each back into the exact double or blob it
/// was. PostgreSQL takes an array literal of the column's type with `= ANY(…)`.
///
/// NULLs are left out: `x IN (…, NULL)` is NULL where it would otherwise be false, and the
/// compiled predicates count NULL as false everywhere (``SQLBuilder``'s `coalesce` around NOT).
extension SQLDialect {
    /// `IN`/`= ANY` of the non-nil `operands` (already in the form bound for a comparison with an
    /// attribute of `type`), to follow the compared expression, and the one value to bind; nil
    /// when no operand is left (the condition is then false).
    func valueList(_ operands: [AttributeValue], comparedWith type: AttributeType) -> (condition: String, binding: AttributeValue)? {
        let values = operands.filter { !$0.isNull }
        guard !values.isEmpty else { return nil }
        switch self {
        case .sqlite: return Self.sqliteList(values)
        case .postgres: return Self.postgresList(values, type)
        }
    }

    // MARK: SQLite

    private static func sqliteList(_ values: [AttributeValue]) -> (condition: String, binding: AttributeValue) {
        // Integers and strings are JSON's own; anything else is tagged text for skerry_list_value.
        let plain = values.allSatisfy {
            switch $0 {
            case .int, .bool, .string, .url: return true
            default: return false
            }
        }
        // Built as bytes: appending to a String through a view of it would copy it each time.
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(values.count * 8)
        func append(_ text: String) { json.append(contentsOf: text.utf8) }
        for (position, value) in values.enumerated() {
            if position > 0 { json.append(UInt8(ascii: ",")) }
            switch value {
            case .int(let v): append(String(v))
            case .bool(let v): append(v ? "1" : "0")
            case .string(let v): appendJSONString(v, tagged: !plain, to: &json)
            case .url(let v): appendJSONString(v.absoluteString, tagged: !plain, to: &json)
            case .double(let v): append("\"r" + hex(v.bitPattern) + "\"")
            case .date(let v): append("\"r" + hex(v.timeIntervalSinceReferenceDate.bitPattern) + "\"")
            case .data(let v): append("\"b" + hex(v) + "\"")
            case .uuid(let v): append("\"b" + withUnsafeBytes(of: v.uuid) { hex($0) } + "\"")
            case .decimal(let v):
                // Unreachable: an operand compared with a decimal column is a double (SQLBuilder.operand).
                append("\"r" + hex(NSDecimalNumber(decimal: v).doubleValue.bitPattern) + "\"")
            case .null:
                append("null")
            }
        }
        json.append(UInt8(ascii: "]"))
        let item = plain ? "value" : "skerry_list_value(value)"
        return ("IN (SELECT \(item) FROM json_each(?))", .string(String(decoding: json, as: UTF8.self)))
    }

    /// `text` as a JSON string (after a `t` when `tagged`): quotes, backslashes and control
    /// characters escaped.
    private static func appendJSONString(_ text: String, tagged: Bool, to json: inout [UInt8]) {
        json.append(UInt8(ascii: "\""))
        if tagged { json.append(UInt8(ascii: "t")) }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                json.append(UInt8(ascii: "\\"))
                json.append(byte)
            case 0..<0x20:
                json.append(contentsOf: Array("\\u00".utf8))
                json.append(hexDigits[Int(byte >> 4)])
                json.append(hexDigits[Int(byte & 0xF)])
            default:
                json.append(byte)
            }
        }
        json.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The 16 hexadecimal digits of `bits`, most significant first.
    static func hex(_ bits: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for position in 0..<16 { buffer[position] = hexDigits[Int(bits >> UInt64(60 - 4 * position)) & 0xF] }
            return 16
        }
    }

    /// The bytes in hexadecimal, two digits each.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var digits: [UInt8] = []
        digits.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            digits.append(hexDigits[Int(byte >> 4)])
            digits.append(hexDigits[Int(byte & 0xF)])
        }
        return String(decoding: digits, as: UTF8.self)
    }

    // MARK: PostgreSQL

    private static func postgresList(_ values: [AttributeValue], _ type: AttributeType) -> (condition: String, binding: AttributeValue) {
        let elementType: String
        switch type {
        case .integer16, .integer32, .integer64:
            // A fraction compares exactly with integers as numeric (as a single value does).
            elementType = values.contains { if case .double = $0 { return true } else { return false } } ? "numeric" : "bigint"
        case .float, .double: elementType = "double precision"
        case .decimal: elementType = "numeric"
        case .date: elementType = "timestamptz"
        case .string, .url: elementType = "text"
        case .boolean: elementType = "boolean"
        case .binary: elementType = "bytea"
        case .uuid: elementType = "uuid"
        }
        var literal = "{"
        literal.reserveCapacity(values.count * 8)
        var first = true
        for value in values {
            guard let element = postgresElement(value) else { continue }
            if !first { literal += "," }
            first = false
            literal += element
        }
        literal += "}"
        return ("= ANY(?::\(elementType)[])", .string(literal))
    }

    /// `value` as an element of a PostgreSQL array literal; nil for a date no timestamp can hold
    /// (no row holds it either).
    private static func postgresElement(_ value: AttributeValue) -> String? {
        switch value {
        case .null: return "NULL"
        case .bool(let v): return v ? "t" : "f"
        case .int(let v): return String(v)
        case .double(let v):
            if let integer = Int64(exactly: v) { return String(integer) }
            if v.isInfinite { return v > 0 ? "Infinity" : "-Infinity" }
            return "\(v)"
        case .decimal(let v): return v.description
        case .date(let v): return postgresTimestamp(v.timeIntervalSinceReferenceDate)
        case .string(let v): return quotedElement(v)
        case .url(let v): return quotedElement(v.absoluteString)
        case .data(let v): return "\"\\\\x" + hex(v) + "\""
        case .uuid(let v): return v.uuidString.lowercased()
        }
    }

    /// `text` in double quotes, its quotes and backslashes escaped.
    private static func quotedElement(_ text: String) -> String {
        var quoted: [UInt8] = [UInt8(ascii: "\"")]
        quoted.reserveCapacity(text.utf8.count + 2)
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { quoted.append(UInt8(ascii: "\\")) }
            quoted.append(byte)
        }
        quoted.append(UInt8(ascii: "\""))
        return String(decoding: quoted, as: UTF8.self)
    }

    /// The instant `seconds` after Foundation's reference date as a `timestamptz` literal in UTC,
    /// to the microsecond the store keeps (rounded as the PostgreSQL store rounds a date it binds);
    /// nil when no 64-bit count of microseconds holds it.
    static func postgresTimestamp(_ seconds: Double) -> String? {
        // Microseconds from PostgreSQL's epoch, 2000-01-01 (366 days before the reference date).
        let micros = ((seconds + 31_622_400) * 1_000_000).rounded()
        guard micros.isFinite, let count = Int64(exactly: micros) else { return nil }
        let microsPerDay: Int64 = 86_400_000_000
        var days = count / microsPerDay
        var time = count % microsPerDay
        if time < 0 {
            days -= 1
            time += microsPerDay
        }
        // Civil date from days since 1970-01-01 (H. Hinnant's algorithm, proleptic Gregorian).
        let z = days + 10_957 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ number: Int64, _ width: Int) -> String {
            let digits = String(number)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let seconds = time / 1_000_000
        let text =
            padded(year > 0 ? year : 1 - year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + " "
            + padded(seconds / 3_600, 2) + ":" + padded(seconds / 60 % 60, 2) + ":" + padded(seconds % 60, 2) + "."
            + padded(time % 1_000_000, 6) + "+00"
        return year > 0 ? text : text + " BC"
    }
}
