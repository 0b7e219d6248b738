import Foundation
import SkerryCore

/// PostgreSQL type OIDs the client encodes and decodes (`pg_type.oid`; fixed for built-in types).
enum PostgresType {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let char: UInt32 = 18
    static let name: UInt32 = 19
    static let int8: UInt32 = 20
    static let int2: UInt32 = 21
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let oid: UInt32 = 26
    static let float4: UInt32 = 700
    static let float8: UInt32 = 701
    static let unknown: UInt32 = 705
    static let bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043
    static let timestamp: UInt32 = 1114
    static let timestamptz: UInt32 = 1184
    static let numeric: UInt32 = 1700
    static let uuid: UInt32 = 2950
    static let int8Array: UInt32 = 1016

    /// Whether values of this type are text in binary format too.
    static func isText(_ oid: UInt32) -> Bool {
        oid == text || oid == varchar || oid == bpchar || oid == name || oid == unknown
    }

    /// Seconds from PostgreSQL's epoch (2000-01-01 00:00:00 UTC) to Foundation's reference date
    /// (2001-01-01 00:00:00 UTC): 366 days.
    static let epochOffset: Double = 31_622_400
}

/// Parameter values encoded for one execution: the bytes of every value in one buffer, and the
/// arrays libpq takes (`paramValues`, `paramLengths`, `paramFormats`).
///
/// Each value is encoded for the type the server gave its parameter: binary where the client
/// knows the type's binary form, text otherwise (the server then parses it as it would a literal).
/// A connection keeps one and reuses it for every execution (``removeAll()`` keeps the
/// capacity), so that encoding a statement's parameters allocates nothing once it has grown.
struct EncodedParameters {
    /// The values, one after another (a text value followed by a NUL).
    private(set) var bytes: [UInt8] = []
    /// Each value's length in `bytes` (without a text value's NUL); -1 for NULL, whose length
    /// libpq ignores. Where a value starts follows from the lengths before it.
    private(set) var lengths: [Int32] = []
    private(set) var formats: [Int32] = []
    /// The value pointers handed to libpq, rebuilt by ``withParameters(_:)`` (kept for its capacity).
    private var pointers: [UnsafePointer<CChar>?] = []

    /// No values and no capacity.
    init() {}

    init(capacity: Int) {
        lengths.reserveCapacity(capacity)
        formats.reserveCapacity(capacity)
        pointers.reserveCapacity(capacity)
        bytes.reserveCapacity(capacity * 8)
    }

    var count: Int { lengths.count }

    /// Forgets every value, keeping the buffers' capacity.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        formats.removeAll(keepingCapacity: true)
    }

    /// Appends `value` encoded for a parameter of type `oid`.
    /// - Throws: ``PostgresError`` with ``SQLState/invalidParameterValue`` when the value cannot be
    ///   sent as that type (a string for an integer parameter, a NaN for a numeric one).
    mutating func append(_ value: AttributeValue, as oid: UInt32, sql: String) throws(PostgresError) {
        let start = bytes.count
        var format: Int32 = 1
        switch value {
        case .null:
            lengths.append(-1)
            formats.append(1)
            return
        case .bool(let v):
            switch oid {
            case PostgresType.bool: bytes.append(v ? 1 : 0)
            case PostgresType.int2: appendInteger(Int16(v ? 1 : 0))
            case PostgresType.int4: appendInteger(Int32(v ? 1 : 0))
            case PostgresType.int8: appendInteger(Int64(v ? 1 : 0))
            default:
                format = 0
                appendText(v ? "true" : "false")
            }
        case .int(let v):
            switch oid {
            case PostgresType.int8: appendInteger(v)
            case PostgresType.int4:
                guard let narrow = Int32(exactly: v) else { throw outOfRange(value, oid, sql) }
                appendInteger(narrow)
            case PostgresType.int2:
                guard let narrow = Int16(exactly: v) else { throw outOfRange(value, oid, sql) }
                appendInteger(narrow)
            case PostgresType.float8: appendInteger(Double(v).bitPattern)
            case PostgresType.float4: appendInteger(Float(v).bitPattern)
            case PostgresType.bool: bytes.append(v != 0 ? 1 : 0)
            default:
                format = 0
                appendText(String(v))
            }
        case .double(let v):
            switch oid {
            case PostgresType.float8: appendInteger(v.bitPattern)
            case PostgresType.float4: appendInteger(Float(v).bitPattern)
            default:
                // As text (for numeric parameters): an integral value exactly, as its integer.
                format = 0
                if let integer = Int64(exactly: v) {
                    appendText(String(integer))
                } else {
                    appendText(v.isNaN ? "NaN" : v.isInfinite ? (v > 0 ? "Infinity" : "-Infinity") : "\(v)")
                }
            }
        case .decimal(let v):
            guard !v.isNaN else {
                throw PostgresError(sqlState: .invalidParameterValue, message: "A NaN decimal cannot be stored.", sql: sql)
            }
            format = 0
            appendText(v.description)
        case .date(let v):
            let seconds = v.timeIntervalSinceReferenceDate + PostgresType.epochOffset
            switch oid {
            case PostgresType.timestamptz, PostgresType.timestamp:
                let micros = (seconds * 1_000_000).rounded()
                guard micros.isFinite, let exact = Int64(exactly: micros) else { throw outOfRange(value, oid, sql) }
                appendInteger(exact)
            case PostgresType.float8: appendInteger(v.timeIntervalSinceReferenceDate.bitPattern)
            default:
                format = 0
                let formatter = ISO8601DateFormatter() // a rare path: parameters typed neither timestamp nor float8
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                appendText(formatter.string(from: v))
            }
        case .string(let v):
            if oid == PostgresType.bytea {
                bytes.append(contentsOf: v.utf8)
            } else {
                format = PostgresType.isText(oid) ? 1 : 0
                appendText(v)
            }
        case .url(let v):
            format = PostgresType.isText(oid) ? 1 : 0
            appendText(v.absoluteString)
        case .data(let v):
            if oid == PostgresType.bytea || oid == PostgresType.unknown {
                bytes.append(contentsOf: v)
            } else {
                throw PostgresError(
                    sqlState: .invalidParameterValue,
                    message: "Binary data cannot be sent as a parameter of type \(oid).", sql: sql)
            }
        case .uuid(let v):
            if oid == PostgresType.uuid {
                withUnsafeBytes(of: v.uuid) { bytes.append(contentsOf: $0) }
            } else {
                format = 0
                appendText(v.uuidString.lowercased())
            }
        }
        lengths.append(Int32(bytes.count - start))
        formats.append(format)
        if format == 0 {
            // libpq reads text-format values up to a NUL and ignores their lengths: a NUL inside
            // would cut the value short without an error, so it is refused here.
            guard !bytes[start...].contains(0) else {
                throw PostgresError(
                    sqlState: .invalidParameterValue,
                    message: "The value \(value) holds a NUL character, which PostgreSQL cannot store as text.", sql: sql)
            }
            bytes.append(0)
        }
    }

    /// Appends `keys` as a `bigint[]` in PostgreSQL's binary array format: a header (one
    /// dimension, no NULLs, element type `int8`, the length, lower bound 1), then each element's
    /// length and value.
    mutating func appendInt64Array(_ keys: some Collection<Int64>) {
        let start = bytes.count
        bytes.reserveCapacity(start + 20 + 12 * keys.count)
        appendInteger(Int32(1))
        appendInteger(Int32(0))
        appendInteger(Int32(PostgresType.int8))
        appendInteger(Int32(keys.count))
        appendInteger(Int32(1))
        for key in keys {
            appendInteger(Int32(8))
            appendInteger(key)
        }
        lengths.append(Int32(bytes.count - start))
        formats.append(1)
    }

    private mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func appendText(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private func outOfRange(_ value: AttributeValue, _ oid: UInt32, _ sql: String) -> PostgresError {
        PostgresError(sqlState: .numericValueOutOfRange, message: "The value \(value) does not fit a parameter of type \(oid).", sql: sql)
    }

    /// Calls `body` with libpq's arrays of value pointers, lengths and formats (a NULL value has a
    /// nil pointer). The pointers are valid only during the call.
    mutating func withParameters<T>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) -> T {
        var pointers = self.pointers
        self.pointers = [] // one owner while it is filled: no copy
        pointers.removeAll(keepingCapacity: true)
        defer { self.pointers = pointers }
        return bytes.withUnsafeBufferPointer { buffer in
            // An empty buffer may have no base address: give empty values a valid one.
            let base = buffer.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(bitPattern: 1)
            var offset = 0
            for (length, format) in zip(lengths, formats) {
                guard length >= 0 else {
                    pointers.append(nil)
                    continue
                }
                pointers.append(base.map { ($0 + offset).assumingMemoryBound(to: CChar.self) })
                offset += Int(length) + (format == 0 ? 1 : 0)
            }
            return pointers.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}

/// Writes one execution's parameters, in order, each encoded for the type the server gave it,
/// straight into the connection's buffer (``PostgresConnection/withParameters(for:_:_:)``).
struct ParameterWriter {
    let statement: PostgresStatement
    var encoded: EncodedParameters
    /// The statement's parameter types (read once, not through the statement for each value).
    private let types: [UInt32]

    init(statement: PostgresStatement, encoded: EncodedParameters) {
        self.statement = statement
        self.encoded = encoded
        types = statement.parameterTypes
    }

    /// Appends the next parameter.
    /// - Throws: ``PostgresError`` when the statement takes no more parameters or the value cannot
    ///   be sent as the parameter's type.
    mutating func append(_ value: AttributeValue) throws(PostgresError) {
        guard encoded.count < types.count else { throw countMismatch(given: encoded.count + 1) }
        try encoded.append(value, as: types[encoded.count], sql: statement.sql)
    }

    /// Appends keys as the next parameter, a `bigint[]` (binary when the server typed the
    /// parameter so, as `= ANY(?::bigint[])` does; as an array literal otherwise).
    mutating func append(keys: some Collection<Int64>) throws(PostgresError) {
        guard encoded.count < types.count else { throw countMismatch(given: encoded.count + 1) }
        if types[encoded.count] == PostgresType.int8Array {
            encoded.appendInt64Array(keys)
        } else {
            try encoded.append(SQLDialect.postgres.keyList(Array(keys)), as: types[encoded.count], sql: statement.sql)
        }
    }

    /// Checks that every parameter was written and calls `body` with their count and libpq's
    /// arrays of values, lengths and formats, valid only during the call.
    mutating func finish<T>(
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) throws(PostgresError) -> T {
        guard encoded.count == statement.parameterTypes.count else { throw countMismatch(given: encoded.count) }
        let count = Int32(encoded.count)
        return encoded.withParameters { body(count, $0, $1, $2) }
    }

    private func countMismatch(given: Int) -> PostgresError {
        PostgresError(
            sqlState: .protocolViolation,
            message: "The statement takes \(statement.parameterTypes.count) parameters; \(given) were given.",
            sql: statement.sql)
    }
}
