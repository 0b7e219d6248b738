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
///
/// Noncopyable: it owns its buffers (allocated memory, written in place: a value costs a few
/// stores, not an array append each), and frees them when it ends.
struct EncodedParameters: ~Copyable {
    /// The values, one after another (a text value followed by a NUL); `byteCount` of
    /// `byteCapacity` used.
    private var bytes: UnsafeMutableRawPointer
    private var byteCapacity: Int
    private var byteCount = 0
    /// Per parameter (`count` of `capacity` used): its length in `bytes` (without a text value's
    /// NUL; -1 for NULL, whose length libpq ignores), its format, and its pointer (filled by
    /// ``withParameters(_:)``).
    private var lengths: UnsafeMutablePointer<Int32>
    private var formats: UnsafeMutablePointer<Int32>
    private var pointers: UnsafeMutablePointer<UnsafePointer<CChar>?>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
        byteCapacity = self.capacity * 8
        bytes = .allocate(byteCount: byteCapacity, alignment: 8)
        lengths = .allocate(capacity: self.capacity)
        formats = .allocate(capacity: self.capacity)
        pointers = .allocate(capacity: self.capacity)
    }

    deinit {
        bytes.deallocate()
        lengths.deallocate()
        formats.deallocate()
        pointers.deallocate()
    }

    /// Forgets every value, keeping the buffers' capacity.
    mutating func removeAll() {
        byteCount = 0
        count = 0
    }

    // MARK: Writing

    /// Room for `size` more bytes, at the end of the values.
    @inline(__always)
    private mutating func reserve(_ size: Int) -> UnsafeMutableRawPointer {
        if byteCount + size > byteCapacity { growBytes(to: byteCount + size) }
        return bytes + byteCount
    }

    @inline(never)
    private mutating func growBytes(to minimum: Int) {
        byteCapacity = max(minimum, byteCapacity * 2)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: byteCapacity, alignment: 8)
        grown.copyMemory(from: bytes, byteCount: byteCount)
        bytes.deallocate()
        bytes = grown
    }

    @inline(never)
    private mutating func growParameters() {
        let newCapacity = capacity * 2
        func grow<T>(_ old: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<T> {
            let grown = UnsafeMutablePointer<T>.allocate(capacity: newCapacity)
            grown.moveInitialize(from: old, count: count)
            old.deallocate()
            return grown
        }
        lengths = grow(lengths)
        formats = grow(formats)
        pointers.deallocate() // filled only while libpq reads them
        pointers = .allocate(capacity: newCapacity)
        capacity = newCapacity
    }

    /// Counts a parameter of `length` bytes (-1: NULL) in `format`.
    @inline(__always)
    private mutating func record(length: Int, format: Int32) {
        if count == capacity { growParameters() }
        (lengths + count).initialize(to: Int32(length))
        (formats + count).initialize(to: format)
        count += 1
    }

    /// Ends the value whose bytes start at `start`.
    @inline(__always)
    private mutating func endValue(from start: Int, format: Int32) {
        record(length: byteCount - start, format: format)
    }

    /// Appends a NULL.
    mutating func appendNull() {
        record(length: -1, format: 1)
    }

    /// Appends an integer (or a float's bit pattern) in binary format, big-endian.
    @inline(__always)
    mutating func appendBinary<T: FixedWidthInteger>(_ value: T) {
        let start = byteCount
        appendInteger(value)
        endValue(from: start, format: 1)
    }

    /// Appends text in binary format (for a text parameter: the same bytes).
    mutating func appendBinaryText(_ text: String) {
        let start = byteCount
        appendText(text)
        endValue(from: start, format: 1)
    }

    @inline(__always)
    private mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size).storeBytes(of: value.bigEndian, as: T.self)
        byteCount += MemoryLayout<T>.size
    }

    private mutating func appendBytes(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        reserve(source.count).copyMemory(from: base, byteCount: source.count)
        byteCount += source.count
    }

    private mutating func appendText(_ text: String) {
        var text = text
        text.withUTF8 { appendBytes(UnsafeRawBufferPointer($0)) }
    }

    /// Appends `value` encoded for a parameter of type `oid`.
    /// - Throws: ``PostgresError`` with ``SQLState/invalidParameterValue`` when the value cannot be
    ///   sent as that type (a string for an integer parameter, a NaN for a numeric one).
    mutating func append(_ value: AttributeValue, as oid: UInt32, sql: String) throws(PostgresError) {
        let start = byteCount
        var format: Int32 = 1
        switch value {
        case .null:
            appendNull()
            return
        case .bool(let v):
            switch oid {
            case PostgresType.bool: appendInteger(UInt8(v ? 1 : 0))
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
            case PostgresType.bool: appendInteger(UInt8(v != 0 ? 1 : 0))
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
            switch oid {
            case PostgresType.timestamptz, PostgresType.timestamp:
                guard let micros = Self.timestampMicros(v.timeIntervalSinceReferenceDate) else { throw outOfRange(value, oid, sql) }
                appendInteger(micros)
            case PostgresType.float8: appendInteger(v.timeIntervalSinceReferenceDate.bitPattern)
            default:
                format = 0
                let formatter = ISO8601DateFormatter() // a rare path: parameters typed neither timestamp nor float8
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                appendText(formatter.string(from: v))
            }
        case .string(let v):
            // A text or bytea parameter takes the UTF-8 bytes as its binary form.
            format = oid == PostgresType.bytea || PostgresType.isText(oid) ? 1 : 0
            appendText(v)
        case .url(let v):
            format = PostgresType.isText(oid) ? 1 : 0
            appendText(v.absoluteString)
        case .data(let v):
            if oid == PostgresType.bytea || oid == PostgresType.unknown {
                v.withUnsafeBytes { appendBytes($0) }
            } else {
                throw PostgresError(
                    sqlState: .invalidParameterValue,
                    message: "Binary data cannot be sent as a parameter of type \(oid).", sql: sql)
            }
        case .uuid(let v):
            if oid == PostgresType.uuid {
                withUnsafeBytes(of: v.uuid) { appendBytes($0) }
            } else {
                format = 0
                appendText(v.uuidString.lowercased())
            }
        }
        if format == 0 {
            // libpq reads text-format values up to a NUL and ignores their lengths: a NUL inside
            // would cut the value short without an error, so it is refused here.
            guard !UnsafeRawBufferPointer(start: bytes + start, count: byteCount - start).contains(0) else {
                byteCount = start
                throw PostgresError(
                    sqlState: .invalidParameterValue,
                    message: "The value \(value) holds a NUL character, which PostgreSQL cannot store as text.", sql: sql)
            }
            let length = byteCount - start
            appendInteger(UInt8(0)) // ends the value; not part of its length
            record(length: length, format: 0)
        } else {
            endValue(from: start, format: format)
        }
    }

    /// Microseconds from PostgreSQL's epoch of the instant `seconds` after Foundation's reference
    /// date, as a `timestamp`/`timestamptz` holds it; nil when no timestamp can hold it.
    @inline(__always)
    static func timestampMicros(_ seconds: Double) -> Int64? {
        let micros = ((seconds + PostgresType.epochOffset) * 1_000_000).rounded()
        guard micros.isFinite else { return nil }
        return Int64(exactly: micros)
    }

    /// Appends `keys` as a `bigint[]` in PostgreSQL's binary array format: a header (one
    /// dimension, no NULLs, element type `int8`, the length, lower bound 1), then each element's
    /// length and value.
    mutating func appendInt64Array(_ keys: some Collection<Int64>) {
        let start = byteCount
        _ = reserve(20 + 12 * keys.count)
        appendInteger(Int32(1))
        appendInteger(Int32(0))
        appendInteger(Int32(PostgresType.int8))
        appendInteger(Int32(keys.count))
        appendInteger(Int32(1))
        for key in keys {
            appendInteger(Int32(8))
            appendInteger(key)
        }
        endValue(from: start, format: 1)
    }

    private func outOfRange(_ value: AttributeValue, _ oid: UInt32, _ sql: String) -> PostgresError {
        PostgresError(sqlState: .numericValueOutOfRange, message: "The value \(value) does not fit a parameter of type \(oid).", sql: sql)
    }

    // MARK: Handing over

    /// Calls `body` with libpq's arrays of value pointers, lengths and formats (a NULL value has a
    /// nil pointer). The pointers are valid only during the call.
    mutating func withParameters<T>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) -> T {
        var offset = 0
        for index in 0..<count {
            let length = Int(lengths[index])
            guard length >= 0 else {
                (pointers + index).initialize(to: nil)
                continue
            }
            (pointers + index).initialize(to: (bytes + offset).assumingMemoryBound(to: CChar.self))
            offset += length + (formats[index] == 0 ? 1 : 0)
        }
        return body(pointers, lengths, formats)
    }
}

/// Writes one execution's parameters, in order, each encoded for the type the server gave it,
/// straight into the connection's buffer (``PostgresConnection/withParameters(for:_:_:)``).
struct ParameterWriter: ~Copyable {
    let statement: PostgresStatement
    var encoded: EncodedParameters
    /// The statement's parameter types (read once, not through the statement for each value).
    private let types: [UInt32]

    init(statement: PostgresStatement, encoded: consuming EncodedParameters) {
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

    /// Appends attribute `index` of `values`, an attribute of `type`, as the next parameter: read
    /// from where it lies (an object's storage) when the parameter is of the attribute's own column
    /// type (numbers, dates, Booleans and strings: no ``AttributeValue`` made), as
    /// ``append(_:)`` does otherwise. The same bytes either way.
    /// - Throws: as ``append(_:)``.
    mutating func append(_ values: RowValues, at index: Int, type: AttributeType) throws(PostgresError) {
        guard encoded.count < types.count else { throw countMismatch(given: encoded.count + 1) }
        let oid = types[encoded.count]
        switch (type, oid) {
        case (.integer64, PostgresType.int8), (.integer32, PostgresType.int8), (.integer16, PostgresType.int8):
            if let value = values.integer(at: index) { return encoded.appendBinary(value) }
        case (.double, PostgresType.float8), (.float, PostgresType.float8):
            if let value = values.double(at: index) { return encoded.appendBinary(value.bitPattern) }
        case (.date, PostgresType.timestamptz), (.date, PostgresType.timestamp):
            if let seconds = values.double(at: index), let micros = EncodedParameters.timestampMicros(seconds) {
                return encoded.appendBinary(micros)
            }
        case (.boolean, PostgresType.bool):
            if let value = values.integer(at: index) { return encoded.appendBinary(UInt8(value != 0 ? 1 : 0)) }
        case (.string, _) where PostgresType.isText(oid):
            if let value = values.string(at: index) { return encoded.appendBinaryText(value) }
        default:
            break
        }
        // NULL, another parameter type, or a value the fast path does not take (out of range).
        try encoded.append(values[index], as: oid, sql: statement.sql)
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
        guard encoded.count == types.count else { throw countMismatch(given: encoded.count) }
        let count = Int32(encoded.count)
        return encoded.withParameters { body(count, $0, $1, $2) }
    }

    /// Ends the writer, handing its buffer back.
    consuming func release() -> EncodedParameters { encoded }

    private func countMismatch(given: Int) -> PostgresError {
        PostgresError(
            sqlState: .protocolViolation,
            message: "The statement takes \(statement.parameterTypes.count) parameters; \(given) were given.",
            sql: statement.sql)
    }
}
