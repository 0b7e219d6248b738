import CLibPQ
import Foundation
import SkerryCore

/// How the cells of one result column are read as values of one attribute type: chosen once per
/// result column from the column's type (its OID) and the attribute's, so that reading a cell is
/// one switch and no type look-up.
struct PostgresColumnDecoder {
    enum Kind: UInt8 {
        /// The column cannot hold values of the attribute's type (a foreign table, or a column
        /// changed by hand): any value but NULL is undecodable.
        case mismatch
        case bool, integer, float4, float8, numeric, timestamp, text, url, bytea, uuid
    }

    let kind: Kind
    /// The values an integer attribute can hold (the whole `Int64` range for other types).
    let range: ClosedRange<Int64>

    /// The decoder of a column of type `oid` for an attribute of `type`.
    init(_ type: AttributeType, oid: UInt32) {
        range = Self.range(of: type)
        switch type {
        case .boolean:
            kind = oid == PostgresType.bool ? .bool : .mismatch
        case .integer16, .integer32, .integer64:
            kind = oid == PostgresType.int8 || oid == PostgresType.int4 || oid == PostgresType.int2 ? .integer : .mismatch
        case .float, .double:
            kind = oid == PostgresType.float8 ? .float8 : oid == PostgresType.float4 ? .float4 : .mismatch
        case .decimal:
            kind = oid == PostgresType.numeric ? .numeric : .mismatch
        case .date:
            kind = oid == PostgresType.timestamptz || oid == PostgresType.timestamp ? .timestamp : .mismatch
        case .string:
            kind = PostgresType.isText(oid) ? .text : .mismatch
        case .url:
            kind = PostgresType.isText(oid) ? .url : .mismatch
        case .binary:
            kind = oid == PostgresType.bytea ? .bytea : .mismatch
        case .uuid:
            kind = oid == PostgresType.uuid ? .uuid : .mismatch
        }
    }

    private static func range(of type: AttributeType) -> ClosedRange<Int64> {
        switch type {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        default: return Int64.min...Int64.max
        }
    }
}

extension PostgresResult {
    /// The decoders of the columns from `firstColumn` on, one per type of `types`.
    func decoders(_ types: some Sequence<AttributeType>, from firstColumn: Int32) -> [PostgresColumnDecoder] {
        var column = firstColumn
        return types.map { type in
            defer { column += 1 }
            return PostgresColumnDecoder(type, oid: PQftype(handle, column))
        }
    }

    /// The value at (`row`, `column`) read by `decoder`, or nil when the cell is not a valid value
    /// of the decoder's attribute type.
    func value(_ row: Int32, _ column: Int32, _ decoder: PostgresColumnDecoder) -> AttributeValue? {
        guard let raw = Self.bytes(cell(row, column)) else { return .null }
        switch decoder.kind {
        case .mismatch: return nil
        case .bool: return Self.bool(raw).map(AttributeValue.bool)
        case .integer: return Self.integer(raw, decoder.range).map(AttributeValue.int)
        case .float4, .float8: return Self.double(raw, decoder.kind).map(AttributeValue.double)
        case .timestamp: return Self.timestamp(raw).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .text: return .string(Self.string(raw))
        case .numeric, .url, .bytea, .uuid: return Self.object(raw, decoder.kind)
        }
    }

    /// Reads a row's `cells` (``cells(_:)``, with a cell for each column below `firstColumn +
    /// decoders.count`) from `firstColumn` on into attributes `0..<decoders.count` of `base` (storage of `layout`
    /// holding none of them), one per decoder. NULL cells leave their attribute without a value.
    /// - Returns: nil, or the index of the first attribute whose cell was not a valid value (the
    ///   attributes before it are set).
    static func decode(
        _ cells: UnsafePointer<SkerryPQCell>, from firstColumn: Int, _ decoders: [PostgresColumnDecoder],
        into base: UnsafeMutableRawPointer, _ layout: ValueLayout
    ) -> Int? {
        for index in decoders.indices {
            let decoder = decoders[index]
            guard let raw = bytes(cells[firstColumn + index]) else { continue }
            switch decoder.kind {
            case .mismatch:
                return index
            case .bool:
                guard let value = Self.bool(raw) else { return index }
                layout.initializeInteger(base, index, value ? 1 : 0)
            case .integer:
                guard let value = Self.integer(raw, decoder.range) else { return index }
                layout.initializeInteger(base, index, value)
            case .float4, .float8:
                guard let value = Self.double(raw, decoder.kind) else { return index }
                layout.initializeDouble(base, index, value)
            case .timestamp:
                guard let value = Self.timestamp(raw) else { return index }
                layout.initializeDouble(base, index, value)
            case .text:
                layout.initializeString(base, index, Self.string(raw))
            case .numeric, .url, .bytea, .uuid:
                guard let value = Self.object(raw, decoder.kind) else { return index }
                layout.store(base, index, value)
            }
        }
        return nil
    }

    // MARK: Cells

    @inline(__always)
    private static func bool(_ raw: UnsafeRawBufferPointer) -> Bool? {
        raw.count == 1 ? raw[0] != 0 : nil
    }

    /// An `int2`, `int4` or `int8` cell, when it lies in `range`.
    @inline(__always)
    private static func integer(_ raw: UnsafeRawBufferPointer, _ range: ClosedRange<Int64>) -> Int64? {
        let value: Int64
        switch raw.count {
        case 8: value = Int64(bigEndian: raw.loadUnaligned(as: Int64.self))
        case 4: value = Int64(Int32(bigEndian: raw.loadUnaligned(as: Int32.self)))
        case 2: value = Int64(Int16(bigEndian: raw.loadUnaligned(as: Int16.self)))
        default: return nil
        }
        return range.contains(value) ? value : nil
    }

    @inline(__always)
    private static func double(_ raw: UnsafeRawBufferPointer, _ kind: PostgresColumnDecoder.Kind) -> Double? {
        if kind == .float8 {
            guard raw.count == 8 else { return nil }
            return Double(bitPattern: UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self)))
        }
        guard raw.count == 4 else { return nil }
        return Double(Float(bitPattern: UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self))))
    }

    /// A `timestamp` or `timestamptz` cell as seconds since Foundation's reference date.
    @inline(__always)
    private static func timestamp(_ raw: UnsafeRawBufferPointer) -> Double? {
        guard raw.count == 8 else { return nil }
        return seconds(micros: Int64(bigEndian: raw.loadUnaligned(as: Int64.self)))
    }

    /// A timestamp's microseconds since PostgreSQL's epoch as seconds since Foundation's reference
    /// date; nil for ±infinity (Int64.max and .min), which no `Date` can stand for.
    @inline(__always)
    static func seconds(micros: Int64) -> Double? {
        guard micros != .max, micros != .min else { return nil }
        return Double(micros) / 1_000_000 - PostgresType.epochOffset
    }

    /// A `text` cell as a string (see `ValueLayout.string(utf8:)`).
    @inline(__always)
    static func string(_ raw: UnsafeRawBufferPointer) -> String { ValueLayout.string(utf8: raw) }

    /// A cell of the kinds whose values are objects (decimal, URL, data, UUID).
    static func object(_ raw: UnsafeRawBufferPointer, _ kind: PostgresColumnDecoder.Kind) -> AttributeValue? {
        switch kind {
        case .numeric:
            return NumericCodec.decimal(raw).map(AttributeValue.decimal)
        case .url:
            return URL(string: String(decoding: raw, as: UTF8.self)).map(AttributeValue.url)
        case .bytea:
            return .data(Data(raw))
        case .uuid:
            guard raw.count == 16 else { return nil }
            return .uuid(UUID(uuid: raw.loadUnaligned(as: uuid_t.self)))
        case .mismatch, .bool, .integer, .float4, .float8, .timestamp, .text:
            return nil
        }
    }
}
