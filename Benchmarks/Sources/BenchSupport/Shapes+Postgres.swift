import Foundation

/// How the raw libpq client writes and reads a shape: the column types of the store's table and
/// the binary encoding of each value, as the store binds and decodes them.
protocol PostgresShape: BenchShape {
    /// The parameter types of the columns, in order.
    static var postgresTypes: [UInt32] { get }
    /// The columns' SQL types in the store's tables (for Fluent's table).
    static var postgresColumnTypes: [String] { get }
    /// Appends every column's value, in order.
    func append(to parameters: inout PGParameters)
    /// Reads every column from result columns `first`...`first + n - 1` of row `row`.
    init(result: PGResult, row: Int32, first: Int32)
}

extension PostgresShape {
    /// `"a", "b", ...`: the columns as the store quotes them.
    static var quotedColumnList: String { columns.map { "\"\($0.name)\"" }.joined(separator: ", ") }
}

extension IntItem: PostgresShape {
    static var postgresTypes: [UInt32] { Array(repeating: PGType.int8, count: 10) }
    static var postgresColumnTypes: [String] { Array(repeating: "bigint", count: 10) }

    func append(to p: inout PGParameters) {
        p.append(i0)
        p.append(i1)
        p.append(i2)
        p.append(i3)
        p.append(i4)
        p.append(i5)
        p.append(i6)
        p.append(i7)
        p.append(i8)
        p.append(i9)
    }

    init(result r: PGResult, row: Int32, first: Int32) {
        self.init()
        i0 = r.int64(row, first)
        i1 = r.int64(row, first + 1)
        i2 = r.int64(row, first + 2)
        i3 = r.int64(row, first + 3)
        i4 = r.int64(row, first + 4)
        i5 = r.int64(row, first + 5)
        i6 = r.int64(row, first + 6)
        i7 = r.int64(row, first + 7)
        i8 = r.int64(row, first + 8)
        i9 = r.int64(row, first + 9)
    }
}

extension MixedItem: PostgresShape {
    static var postgresTypes: [UInt32] {
        [PGType.int8, PGType.int8, PGType.float8, PGType.float8, PGType.text, PGType.text, PGType.timestamptz, PGType.bool]
    }
    static var postgresColumnTypes: [String] {
        ["bigint", "bigint", "double precision", "double precision", "text", "text", "timestamptz", "boolean"]
    }

    func append(to p: inout PGParameters) {
        p.append(count)
        p.append(rank)
        p.append(score)
        p.append(weight)
        p.append(name)
        p.append(label)
        p.append(date)
        p.append(flag)
    }

    init(result r: PGResult, row: Int32, first: Int32) {
        self.init()
        count = r.int64(row, first)
        rank = r.int64(row, first + 1)
        score = r.double(row, first + 2)
        weight = r.double(row, first + 3)
        name = r.string(row, first + 4)
        label = r.string(row, first + 5)
        date = r.date(row, first + 6)
        flag = r.bool(row, first + 7)
    }
}
