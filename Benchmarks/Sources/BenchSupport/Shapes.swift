import CSQLiteRaw
import Foundation
import GRDB
import Skerry
import SkerryCore

/// The shape of the rows a scenario works on: a plain Swift struct, which is also the Skerry typed
/// layer's model (a `ManagedObjectConvertible`), and what every other implementation reads rows
/// into or writes rows from.
///
/// Each shape says how the raw C API binds and reads it, how the engine writes and reads it by
/// attribute index, and which GRDB records stand for it.
public protocol BenchShape: ManagedObjectConvertible, Equatable, Sendable where Relations == Void {
    /// The GRDB record decoded through `Codable`.
    associatedtype CodableRecord: GRDBRecord where CodableRecord.Item == Self
    /// The GRDB record with hand-written `init(row:)` and `encode(to:)`.
    associatedtype RowRecord: GRDBRecord where RowRecord.Item == Self

    /// The shape's name in tables and benchmark names.
    static var shapeName: String { get }
    /// The columns in declaration order: the SQL table's and the engine entity's.
    static var columns: [ShapeColumn] { get }
    /// The column (an `Int64` one) that the update scenario changes, and its key path.
    static var updatedColumnIndex: Int { get }
    static var updatedKeyPath: WritableKeyPath<Self, Int64> { get }

    /// The values of row `index` (deterministic; short strings, so that Swift stores them inline).
    static func make(_ index: Int) -> Self

    /// Binds every column to parameters 1...n of `statement`.
    func bind(to statement: OpaquePointer)
    /// Reads every column from result columns `first`...`first + n - 1` of `statement`.
    init(statement: OpaquePointer, first: Int32)

    /// Writes every attribute to an engine object whose entity was made from ``columns``.
    func write(to object: EntityObject) throws
    /// Reads every attribute of such an engine object.
    init(object: EntityObject) throws
}

/// One column of a shape: its name, its SQL type, its engine attribute type.
public struct ShapeColumn: Sendable {
    public let name: String
    public let sqlType: String
    public let attributeType: AttributeType
}

extension BenchShape {
    /// The table (raw SQLite and GRDB) and the entity (Skerry).
    public static var tableName: String { "item" }
    static var columnList: String { columns.map(\.name).joined(separator: ", ") }
    static var createTableSQL: String {
        "CREATE TABLE item (id INTEGER PRIMARY KEY, " + columns.map { "\($0.name) \($0.sqlType) NOT NULL" }.joined(separator: ", ") + ")"
    }
    /// The engine's entity: the attributes in declaration order, so attribute `k` is column `k`.
    static func engineEntity() -> EntityDescription {
        EntityDescription(name: entityName, attributes: columns.map { AttributeDescription($0.name, $0.attributeType) })
    }
}

// MARK: - Ten integers (the shape of GRDB's own performance suite)

/// Ten `Int64` attributes, `i0`...`i9`.
public struct IntItem: BenchShape {
    public var i0: Int64 = 0, i1: Int64 = 0, i2: Int64 = 0, i3: Int64 = 0, i4: Int64 = 0
    public var i5: Int64 = 0, i6: Int64 = 0, i7: Int64 = 0, i8: Int64 = 0, i9: Int64 = 0

    public typealias CodableRecord = GRDBIntCodable
    public typealias RowRecord = GRDBIntRow

    public init() {}

    public static let entityName = "IntItem"
    public static let attributes: Set<Attribute<IntItem>> = [
        Attribute(\.i0, "i0"), Attribute(\.i1, "i1"), Attribute(\.i2, "i2"), Attribute(\.i3, "i3"), Attribute(\.i4, "i4"),
        Attribute(\.i5, "i5"), Attribute(\.i6, "i6"), Attribute(\.i7, "i7"), Attribute(\.i8, "i8"), Attribute(\.i9, "i9"),
    ]
    public static let relations: Void = ()

    public static var shapeName: String { "10 x Int64" }
    public static var columns: [ShapeColumn] { (0..<10).map { ShapeColumn(name: "i\($0)", sqlType: "INTEGER", attributeType: .integer64) } }
    public static var updatedColumnIndex: Int { 1 }
    public static var updatedKeyPath: WritableKeyPath<IntItem, Int64> { \.i1 }

    public static func make(_ index: Int) -> IntItem {
        let n = Int64(index)
        var item = IntItem()
        item.i0 = n
        item.i1 = n + 1
        item.i2 = n + 2
        item.i3 = n + 3
        item.i4 = n + 4
        item.i5 = n + 5
        item.i6 = n + 6
        item.i7 = n + 7
        item.i8 = n + 8
        item.i9 = n + 9
        return item
    }

    public func bind(to s: OpaquePointer) {
        sqlite3_bind_int64(s, 1, i0)
        sqlite3_bind_int64(s, 2, i1)
        sqlite3_bind_int64(s, 3, i2)
        sqlite3_bind_int64(s, 4, i3)
        sqlite3_bind_int64(s, 5, i4)
        sqlite3_bind_int64(s, 6, i5)
        sqlite3_bind_int64(s, 7, i6)
        sqlite3_bind_int64(s, 8, i7)
        sqlite3_bind_int64(s, 9, i8)
        sqlite3_bind_int64(s, 10, i9)
    }

    public init(statement s: OpaquePointer, first: Int32) {
        i0 = sqlite3_column_int64(s, first)
        i1 = sqlite3_column_int64(s, first + 1)
        i2 = sqlite3_column_int64(s, first + 2)
        i3 = sqlite3_column_int64(s, first + 3)
        i4 = sqlite3_column_int64(s, first + 4)
        i5 = sqlite3_column_int64(s, first + 5)
        i6 = sqlite3_column_int64(s, first + 6)
        i7 = sqlite3_column_int64(s, first + 7)
        i8 = sqlite3_column_int64(s, first + 8)
        i9 = sqlite3_column_int64(s, first + 9)
    }

    public func write(to o: EntityObject) throws {
        try o.setValue(.int(i0), at: 0)
        try o.setValue(.int(i1), at: 1)
        try o.setValue(.int(i2), at: 2)
        try o.setValue(.int(i3), at: 3)
        try o.setValue(.int(i4), at: 4)
        try o.setValue(.int(i5), at: 5)
        try o.setValue(.int(i6), at: 6)
        try o.setValue(.int(i7), at: 7)
        try o.setValue(.int(i8), at: 8)
        try o.setValue(.int(i9), at: 9)
    }

    public init(object o: EntityObject) throws {
        i0 = try o.value(at: 0, as: Int64.self)
        i1 = try o.value(at: 1, as: Int64.self)
        i2 = try o.value(at: 2, as: Int64.self)
        i3 = try o.value(at: 3, as: Int64.self)
        i4 = try o.value(at: 4, as: Int64.self)
        i5 = try o.value(at: 5, as: Int64.self)
        i6 = try o.value(at: 6, as: Int64.self)
        i7 = try o.value(at: 7, as: Int64.self)
        i8 = try o.value(at: 8, as: Int64.self)
        i9 = try o.value(at: 9, as: Int64.self)
    }
}

// MARK: - Mixed

/// Two `Int64`, two `Double`, two short `String`, a `Date` and a `Bool`.
///
/// Every implementation stores the date as SQLite REAL seconds since 2001-01-01 (Skerry's storage
/// form; GRDB records are told to use it too), so that all of them read and write the same data.
public struct MixedItem: BenchShape {
    public var count: Int64 = 0
    public var rank: Int64 = 0
    public var score = 0.0
    public var weight = 0.0
    public var name = ""
    public var label = ""
    public var date = Date(timeIntervalSinceReferenceDate: 0)
    public var flag = false

    public typealias CodableRecord = GRDBMixedCodable
    public typealias RowRecord = GRDBMixedRow

    public init() {}

    public static let entityName = "MixedItem"
    public static let attributes: Set<Attribute<MixedItem>> = [
        Attribute(\.count, "count"), Attribute(\.rank, "rank"), Attribute(\.score, "score"), Attribute(\.weight, "weight"),
        Attribute(\.name, "name"), Attribute(\.label, "label"), Attribute(\.date, "date"), Attribute(\.flag, "flag"),
    ]
    public static let relations: Void = ()

    public static var shapeName: String { "mixed" }
    public static var columns: [ShapeColumn] {
        [
            ShapeColumn(name: "count", sqlType: "INTEGER", attributeType: .integer64),
            ShapeColumn(name: "rank", sqlType: "INTEGER", attributeType: .integer64),
            ShapeColumn(name: "score", sqlType: "REAL", attributeType: .double),
            ShapeColumn(name: "weight", sqlType: "REAL", attributeType: .double),
            ShapeColumn(name: "name", sqlType: "TEXT", attributeType: .string),
            ShapeColumn(name: "label", sqlType: "TEXT", attributeType: .string),
            ShapeColumn(name: "date", sqlType: "REAL", attributeType: .date),
            ShapeColumn(name: "flag", sqlType: "INTEGER", attributeType: .boolean),
        ]
    }
    public static var updatedColumnIndex: Int { 0 }
    public static var updatedKeyPath: WritableKeyPath<MixedItem, Int64> { \.count }

    public static func make(_ index: Int) -> MixedItem {
        var item = MixedItem()
        item.count = Int64(index)
        item.rank = Int64(index % 1_000)
        item.score = Double(index) * 0.5
        item.weight = Double(index % 97) + 0.25
        item.name = "name\(index)" // at most 15 UTF-8 bytes: stored inline
        item.label = "label\(index % 100)"
        item.date = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index))
        item.flag = index % 2 == 0
        return item
    }

    public func bind(to s: OpaquePointer) {
        sqlite3_bind_int64(s, 1, count)
        sqlite3_bind_int64(s, 2, rank)
        sqlite3_bind_double(s, 3, score)
        sqlite3_bind_double(s, 4, weight)
        sqlite3_bind_text(s, 5, name, -1, skerry_sqlite_transient())
        sqlite3_bind_text(s, 6, label, -1, skerry_sqlite_transient())
        sqlite3_bind_double(s, 7, date.timeIntervalSinceReferenceDate)
        sqlite3_bind_int64(s, 8, flag ? 1 : 0)
    }

    public init(statement s: OpaquePointer, first: Int32) {
        count = sqlite3_column_int64(s, first)
        rank = sqlite3_column_int64(s, first + 1)
        score = sqlite3_column_double(s, first + 2)
        weight = sqlite3_column_double(s, first + 3)
        name = String(cString: sqlite3_column_text(s, first + 4)!)
        label = String(cString: sqlite3_column_text(s, first + 5)!)
        date = Date(timeIntervalSinceReferenceDate: sqlite3_column_double(s, first + 6))
        flag = sqlite3_column_int64(s, first + 7) != 0
    }

    public func write(to o: EntityObject) throws {
        try o.setValue(.int(count), at: 0)
        try o.setValue(.int(rank), at: 1)
        try o.setValue(.double(score), at: 2)
        try o.setValue(.double(weight), at: 3)
        try o.setValue(.string(name), at: 4)
        try o.setValue(.string(label), at: 5)
        try o.setValue(.date(date), at: 6)
        try o.setValue(.bool(flag), at: 7)
    }

    public init(object o: EntityObject) throws {
        count = try o.value(at: 0, as: Int64.self)
        rank = try o.value(at: 1, as: Int64.self)
        score = try o.value(at: 2, as: Double.self)
        weight = try o.value(at: 3, as: Double.self)
        name = try o.value(at: 4, as: String.self)
        label = try o.value(at: 5, as: String.self)
        date = try o.value(at: 6, as: Date.self)
        flag = try o.value(at: 7, as: Bool.self)
    }
}
