import Foundation
import GRDB

/// A GRDB record for one shape: a struct with an auto-incremented `id` and the shape's columns.
public protocol GRDBRecord: FetchableRecord, MutablePersistableRecord, Sendable {
    associatedtype Item: BenchShape
    /// The row ID, nil until inserted.
    var id: Int64? { get }
    /// A new record with the values of `item`.
    init(_ item: Item)
    /// Adds 1 to the column the update scenario changes.
    mutating func bump()
}

// MARK: - Ten integers

/// Decoded and encoded through `Codable` (GRDB's `Codable` record support).
public struct GRDBIntCodable: GRDBRecord, Codable {
    public static let databaseTableName = "item"
    public var id: Int64?
    public var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int64

    public init(_ item: IntItem) {
        id = nil
        i0 = item.i0
        i1 = item.i1
        i2 = item.i2
        i3 = item.i3
        i4 = item.i4
        i5 = item.i5
        i6 = item.i6
        i7 = item.i7
        i8 = item.i8
        i9 = item.i9
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    public mutating func bump() { i1 += 1 }
}

/// Hand-written row decoding by column position (as GRDB's "optimized record" benchmark does) and
/// hand-written encoding. Fetched with GRDB's default `SELECT *`: `id` then `i0`...`i9`.
public struct GRDBIntRow: GRDBRecord {
    public static let databaseTableName = "item"
    public var id: Int64?
    public var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int64

    public init(_ item: IntItem) {
        id = nil
        i0 = item.i0
        i1 = item.i1
        i2 = item.i2
        i3 = item.i3
        i4 = item.i4
        i5 = item.i5
        i6 = item.i6
        i7 = item.i7
        i8 = item.i8
        i9 = item.i9
    }

    public init(row: Row) {
        id = row[0]
        i0 = row[1]
        i1 = row[2]
        i2 = row[3]
        i3 = row[4]
        i4 = row[5]
        i5 = row[6]
        i6 = row[7]
        i7 = row[8]
        i8 = row[9]
        i9 = row[10]
    }

    public func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["i0"] = i0
        container["i1"] = i1
        container["i2"] = i2
        container["i3"] = i3
        container["i4"] = i4
        container["i5"] = i5
        container["i6"] = i6
        container["i7"] = i7
        container["i8"] = i8
        container["i9"] = i9
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    public mutating func bump() { i1 += 1 }
}

// MARK: - Mixed

/// Decoded and encoded through `Codable`; dates as seconds since 2001 (Skerry's storage form)
/// rather than GRDB's default text.
public struct GRDBMixedCodable: GRDBRecord, Codable {
    public static let databaseTableName = "item"
    public var id: Int64?
    public var count: Int64
    public var rank: Int64
    public var score: Double
    public var weight: Double
    public var name: String
    public var label: String
    public var date: Date
    public var flag: Bool

    public init(_ item: MixedItem) {
        id = nil
        count = item.count
        rank = item.rank
        score = item.score
        weight = item.weight
        name = item.name
        label = item.label
        date = item.date
        flag = item.flag
    }

    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSinceReferenceDate
    }
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    public mutating func bump() { count += 1 }
}

/// Hand-written row decoding by column position and hand-written encoding.
public struct GRDBMixedRow: GRDBRecord {
    public static let databaseTableName = "item"
    public var id: Int64?
    public var count: Int64
    public var rank: Int64
    public var score: Double
    public var weight: Double
    public var name: String
    public var label: String
    public var date: Date
    public var flag: Bool

    public init(_ item: MixedItem) {
        id = nil
        count = item.count
        rank = item.rank
        score = item.score
        weight = item.weight
        name = item.name
        label = item.label
        date = item.date
        flag = item.flag
    }

    public init(row: Row) {
        id = row[0]
        count = row[1]
        rank = row[2]
        score = row[3]
        weight = row[4]
        name = row[5]
        label = row[6]
        date = Date(timeIntervalSinceReferenceDate: row[7])
        flag = row[8]
    }

    public func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["count"] = count
        container["rank"] = rank
        container["score"] = score
        container["weight"] = weight
        container["name"] = name
        container["label"] = label
        container["date"] = date.timeIntervalSinceReferenceDate
        container["flag"] = flag
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    public mutating func bump() { count += 1 }
}
