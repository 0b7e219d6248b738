import CLibPQ
import Foundation
import SkerryCore

/// The rows of one statement's execution, in binary format, owned until released.
///
/// Not `Sendable`: read it on the thread that ran the statement, inside the connection's closure.
final class PostgresResult {
    let handle: OpaquePointer
    /// Number of rows.
    let rowCount: Int32
    /// Number of columns.
    let columnCount: Int32
    /// libpq's own table of the rows (`rowCount` pointers, each to `columnCount` cells), when
    /// this process's libpq keeps results as ``PostgresResultLayout`` checked and this result's
    /// head agrees; else nil, and cells are read through libpq's calls (see ``cells(_:)``).
    let rows: UnsafePointer<UnsafeMutablePointer<SkerryPQCell>?>?
    /// Room for one row's cells read through libpq's calls, when `rows` is nil (made on first use).
    var scratch: UnsafeMutablePointer<SkerryPQCell>?

    /// Takes over `handle`; its cells are read in place when the layout allows and `readsInPlace`
    /// is true (false: through libpq's calls, for the tests that compare the two).
    init(_ handle: OpaquePointer, readsInPlace: Bool = true) {
        self.handle = handle
        self.rowCount = PQntuples(handle)
        self.columnCount = PQnfields(handle)
        rows = readsInPlace ? PostgresResultLayout.rows(of: handle, rowCount: rowCount, columnCount: columnCount) : nil
    }

    deinit {
        scratch?.deallocate()
        PQclear(handle)
    }

    /// Rows inserted, updated or deleted by the statement (its command tag's count).
    var affectedRows: Int { Self.affectedRows(handle) }

    /// Rows inserted, updated or deleted by the statement whose result is `handle`.
    static func affectedRows(_ handle: OpaquePointer) -> Int {
        // The count's decimal digits (empty for commands that report none), read in place.
        guard var next = PQcmdTuples(handle) else { return 0 }
        var count = 0
        while true {
            let digit = UInt8(bitPattern: next.pointee) &- UInt8(ascii: "0") // anything but 0-9 wraps to 10 or more
            guard digit < 10 else { return count }
            count = count &* 10 &+ Int(digit)
            next += 1
        }
    }

    /// Whether the value at (`row`, `column`) is NULL.
    @inline(__always)
    func isNull(_ row: Int32, _ column: Int32) -> Bool {
        cell(row, column).len < 0
    }

    /// The type OID of `column`.
    func type(of column: Int32) -> UInt32 { PQftype(handle, column) }

    /// The bytes of the cell at (`row`, `column`): none for NULL.
    @inline(__always)
    private func bytes(_ row: Int32, _ column: Int32) -> UnsafeRawBufferPointer {
        let cell = cell(row, column)
        return UnsafeRawBufferPointer(start: cell.value, count: Int(max(cell.len, 0)))
    }

    /// The integer at (`row`, `column`) of an `int2`, `int4` or `int8` column; 0 for NULL.
    @inline(__always)
    func int64(_ row: Int32, _ column: Int32) -> Int64 { Self.int64(cell(row, column)) }

    /// The integer in `cell` (of an `int2`, `int4` or `int8` column); 0 for NULL.
    @inline(__always)
    static func int64(_ cell: SkerryPQCell) -> Int64 {
        // Each case reads no more than the cell's length.
        switch cell.len {
        case 8: return Int64(bigEndian: UnsafeRawPointer(cell.value!).loadUnaligned(as: Int64.self))
        case 4: return Int64(Int32(bigEndian: UnsafeRawPointer(cell.value!).loadUnaligned(as: Int32.self)))
        case 2: return Int64(Int16(bigEndian: UnsafeRawPointer(cell.value!).loadUnaligned(as: Int16.self)))
        default: return 0
        }
    }

    /// The text at (`row`, `column`) of a text column.
    func text(_ row: Int32, _ column: Int32) -> String {
        String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// The value at (`row`, `column`) decoded as a value of an attribute of `type`, or nil when
    /// the column's type cannot hold one (a foreign table, or a column changed by hand). For one
    /// cell; many rows read through ``decoders(_:from:)``, which look the column types up once.
    func value(_ row: Int32, _ column: Int32, as type: AttributeType) -> AttributeValue? {
        value(row, column, PostgresColumnDecoder(type, oid: PQftype(handle, column)))
    }
}

/// PostgreSQL's binary `numeric` format, read into decimal text: a header of four 16-bit integers
/// (digit count, weight of the first digit, sign, display scale) followed by base-10000 digits.
enum NumericCodec {
    /// The value of a binary numeric: `Decimal(string:)` of its ``text(_:)``, or nil for NaN,
    /// infinities or malformed input. The common case (``exactDecimal(_:)``) is made without the
    /// text: about 320 instructions per cell instead of about 8,000 (callgrind, both paths built
    /// with -O, 10,000 cells of prices with two decimals).
    static func decimal(_ raw: UnsafeRawBufferPointer) -> Decimal? {
        if let value = exactDecimal(raw) { return value }
        guard let text = text(raw) else { return nil }
        return Decimal(string: text)
    }

    /// The value of a well-formed, nonzero binary numeric whose digits, up to its display scale,
    /// make an integer of 64 bits at most (19 decimal digits, some of 20), times a power of ten well
    /// inside `Decimal`'s exponents: the decimal `Decimal(string:)` reads from its ``text(_:)``
    /// (the same exponent, significand and text: PostgresCellDecodingTests), built from the
    /// integer and the exponent instead of written as text and parsed. Nil for any other numeric
    /// (zero, more digits, digits past the display scale that are not zeros, NaN, malformed),
    /// which ``decimal(_:)`` reads through the text.
    static func exactDecimal(_ raw: UnsafeRawBufferPointer) -> Decimal? {
        guard raw.count >= 8 else { return nil }
        func int16(at offset: Int) -> Int { Int(Int16(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int16.self))) }
        let count = int16(at: 0), weight = int16(at: 2), sign = UInt16(truncatingIfNeeded: int16(at: 4)), scale = int16(at: 6)
        guard sign == 0x0000 || sign == 0x4000, count > 0, count <= 5, scale >= 0, raw.count == 8 + 2 * count else { return nil }
        var significand: UInt64 = 0
        for position in 0..<count {
            let digit = int16(at: 8 + 2 * position)
            guard (0..<10_000).contains(digit) else { return nil }
            let (shifted, overflow) = significand.multipliedReportingOverflow(by: 10_000)
            let (sum, carry) = shifted.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            significand = sum
        }
        // The value is `significand` × 10^`exponent` (the last digit's weight); the text keeps
        // `scale` fraction digits, dropping those past it (zeros, in what PostgreSQL sends).
        var exponent = 4 * (weight - count + 1)
        if -exponent > scale {
            var dropped = -exponent - scale
            guard dropped <= 4 else { return nil }
            exponent += dropped
            while dropped > 0 {
                guard significand % 10 == 0 else { return nil }
                significand /= 10
                dropped -= 1
            }
        }
        guard significand != 0 else { return nil }
        // Compact, as `Decimal(string:)` leaves its decimals (1.50 is 15 × 10^-1): trailing zeros
        // go to the exponent here, so the result does not depend on `Decimal(UInt64)` compacting.
        while significand % 10 == 0 {
            significand /= 10
            exponent += 1
        }
        guard (-100...100).contains(exponent) else { return nil }
        return Decimal(sign: sign == 0x4000 ? .minus : .plus, exponent: exponent, significand: Decimal(significand))
    }

    /// The decimal text of a binary numeric, or nil for NaN, infinities or malformed input.
    static func text(_ raw: UnsafeRawBufferPointer) -> String? {
        guard raw.count >= 8 else { return nil }
        func int16(at offset: Int) -> Int { Int(Int16(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int16.self))) }
        let count = int16(at: 0), weight = int16(at: 2), sign = UInt16(truncatingIfNeeded: int16(at: 4)), scale = int16(at: 6)
        guard sign == 0x0000 || sign == 0x4000, count >= 0, scale >= 0, raw.count == 8 + 2 * count else { return nil }
        let digits = (0..<count).map { int16(at: 8 + 2 * $0) }
        guard digits.allSatisfy({ (0..<10_000).contains($0) }) else { return nil }
        // Integer part: the digits of weights weight...0; fraction: weights -1, -2, ...
        var integer = ""
        if weight >= 0 {
            for position in 0...weight {
                let digit = position < count ? digits[position] : 0
                integer += position == 0 ? String(digit) : pad(digit)
            }
        } else {
            integer = "0"
        }
        var fraction = ""
        if scale > 0 {
            var position = weight + 1
            while fraction.count < scale {
                let digit = position >= 0 && position < count ? digits[position] : 0
                fraction += pad(digit)
                position += 1
            }
            fraction = String(fraction.prefix(scale))
        }
        return (sign == 0x4000 ? "-" : "") + integer + (fraction.isEmpty ? "" : "." + fraction)
    }

    private static func pad(_ digit: Int) -> String {
        let text = String(digit)
        return String(repeating: "0", count: 4 - text.count) + text
    }
}
