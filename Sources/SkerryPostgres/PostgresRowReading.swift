import CLibPQ
import Foundation
import SkerryCore

/// How the attribute cells of an entity's rows are read into an object's storage, decided once per
/// entity from its attribute types (the store keeps one for each entity it holds) for the column
/// types the store gives those attributes (`SQLDialect.columnType(_:)`).
///
/// A result whose columns have exactly those types (``matches(_:from:)``, checked once per result:
/// the usual case) is read cell by cell with the kind worked out here: no look-up of the column
/// type, no range check (a `smallint` cell always fits a 16-bit attribute), a fixed-size value
/// read straight from libpq's bytes (the cells read in place: ``PostgresResult/cells(_:)``). Other
/// results (a column changed by hand, a foreign table) are read through
/// ``PostgresColumnDecoder``s, which accept every type that can hold the attribute's values.
struct PostgresRowReading: Sendable {
    /// How one attribute's cell is read: the column type the store gives the attribute.
    enum Kind: UInt8, Sendable {
        case int8, int4, int2, bool, float8, timestamp, text, numeric, url, bytea, uuid

        init(_ type: AttributeType) {
            switch type {
            case .integer64: self = .int8
            case .integer32: self = .int4
            case .integer16: self = .int2
            case .boolean: self = .bool
            case .float, .double: self = .float8
            case .date: self = .timestamp
            case .string: self = .text
            case .url: self = .url
            case .decimal: self = .numeric
            case .binary: self = .bytea
            case .uuid: self = .uuid
            }
        }

        /// The type OID of the store's column for attributes read this way.
        var oid: UInt32 {
            switch self {
            case .int8: return PostgresType.int8
            case .int4: return PostgresType.int4
            case .int2: return PostgresType.int2
            case .bool: return PostgresType.bool
            case .float8: return PostgresType.float8
            case .timestamp: return PostgresType.timestamptz
            case .text, .url: return PostgresType.text
            case .numeric: return PostgresType.numeric
            case .bytea: return PostgresType.bytea
            case .uuid: return PostgresType.uuid
            }
        }

        /// The decoder kind of the values that are objects (decimal, URL, data, UUID).
        var objectKind: PostgresColumnDecoder.Kind {
            switch self {
            case .numeric: return .numeric
            case .url: return .url
            case .bytea: return .bytea
            case .uuid: return .uuid
            case .int8, .int4, .int2, .bool, .float8, .timestamp, .text: return .mismatch
            }
        }
    }

    /// One per stored attribute, in the order of their columns.
    let kinds: [Kind]
    /// The type OID of each attribute's column, as `kinds`.
    private let oids: [UInt32]

    init(_ entity: EntityDescription) {
        kinds = entity.attributeTypes.prefix(entity.storedAttributeCount).map(Kind.init)
        oids = kinds.map(\.oid)
    }

    /// Whether the columns of `result` from `firstColumn` on have the types of the store's own
    /// columns (one look-up per column, once per result).
    func matches(_ result: PostgresResult, from firstColumn: Int32) -> Bool {
        guard Int(result.columnCount) >= Int(firstColumn) + oids.count else { return false }
        var column = firstColumn
        for oid in oids {
            if PQftype(result.handle, column) != oid { return false }
            column += 1
        }
        return true
    }

    /// Reads a row's `cells` (``PostgresResult/cells(_:)`` of a result that
    /// ``matches(_:from:)`` from `firstColumn`: it has a cell for each kind there) from
    /// `firstColumn` on into attributes `0..<kinds.count` of `base` (storage of `layout` holding
    /// none of them). NULL cells leave their attribute without a value.
    /// - Returns: nil, or the index of the first attribute whose cell was not a valid value (the
    ///   attributes before it are set).
    func read(
        _ cells: UnsafePointer<SkerryPQCell>, from firstColumn: Int, into base: UnsafeMutableRawPointer, _ layout: ValueLayout
    ) -> Int? {
        var cell = cells + firstColumn
        for index in kinds.indices {
            defer { cell += 1 }
            // libpq gives NULL a length of -1 (and every value a non-null pointer).
            let length = Int(cell.pointee.len)
            if length < 0 { continue }
            let bytes = UnsafeRawPointer(cell.pointee.value!)
            switch kinds[index] {
            case .int8:
                guard length == 8 else { return index }
                layout.initializeInteger(base, index, Int64(bigEndian: bytes.loadUnaligned(as: Int64.self)))
            case .int4:
                guard length == 4 else { return index }
                layout.initializeInteger(base, index, Int64(Int32(bigEndian: bytes.loadUnaligned(as: Int32.self))))
            case .int2:
                guard length == 2 else { return index }
                layout.initializeInteger(base, index, Int64(Int16(bigEndian: bytes.loadUnaligned(as: Int16.self))))
            case .bool:
                guard length == 1 else { return index }
                layout.initializeInteger(base, index, bytes.load(as: UInt8.self) != 0 ? 1 : 0)
            case .float8:
                guard length == 8 else { return index }
                layout.initializeDouble(base, index, Double(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))))
            case .timestamp:
                guard length == 8, let seconds = PostgresResult.seconds(micros: Int64(bigEndian: bytes.loadUnaligned(as: Int64.self)))
                else { return index }
                layout.initializeDouble(base, index, seconds)
            case .text:
                layout.initializeString(base, index, PostgresResult.string(UnsafeRawBufferPointer(start: bytes, count: length)))
            case .numeric, .url, .bytea, .uuid:
                let raw = UnsafeRawBufferPointer(start: bytes, count: length)
                guard let value = PostgresResult.object(raw, kinds[index].objectKind) else { return index }
                layout.store(base, index, value)
            }
        }
        return nil
    }
}

extension PostgresStore {
    /// The reading of each entity the store holds, by entity (see ``PostgresRowReading``).
    static func rowReadings(_ entities: [EntityDescription]) -> [ObjectIdentifier: PostgresRowReading] {
        Dictionary(uniqueKeysWithValues: entities.map { (ObjectIdentifier($0), PostgresRowReading($0)) })
    }
}
