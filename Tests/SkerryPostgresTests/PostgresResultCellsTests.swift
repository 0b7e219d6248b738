import CLibPQ
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// The loaded libpq keeps results as the mirror of its layout in CLibPQ's shim.h says (no server
/// needed: this runs wherever the tests run).
@Suite struct PostgresResultLayoutTests {
    @Test func theLoadedLibpqKeepsResultsAsTheMirrorSays() {
        // If this fails, results are read through libpq's calls (correct, but slower): the
        // mirror in shim.h no longer matches this libpq's `struct pg_result`, or its version is
        // not among those the check is made for.
        #expect(PostgresResultLayout.checkedVersions.contains(Int(PQlibVersion())), "libpq \(PQlibVersion())")
        #expect(PostgresResultLayout.isKnown)
        #expect(PostgresResultLayout.agreesWithLibpq())
    }
}

/// Results are read in place (libpq's own row table, through the mirror of its layout in CLibPQ's
/// shim.h) when the loaded libpq agrees with the mirror: every cell then reads as libpq's calls
/// read it, NULL told apart from empty values, and the store reads the same objects either way.
@Suite(.postgres) struct PostgresResultCellsTests {

    @Test func cellsReadInPlaceAreTheOnesLibpqsCallsRead() throws {
        let connection = try PostgresTestServer.connect()
        let result = try connection.query(
            """
            SELECT n::bigint, (n % 3 = 0)::boolean, CASE WHEN n % 4 = 0 THEN NULL ELSE repeat('x', n % 5) END,
                CASE WHEN n % 2 = 0 THEN NULL ELSE decode(repeat('00', n % 3), 'hex') END, 0::bigint, NULL::text
            FROM generate_series(0, 99) AS n ORDER BY n
            """)
        #expect(result.rows != nil)
        // The same rows, read through libpq's calls.
        let copy = PostgresResult(
            try #require(PQcopyResult(result.handle, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES)), readsInPlace: false)
        #expect(copy.rows == nil)
        #expect(result.rowCount == 100 && copy.rowCount == 100 && result.columnCount == 6)
        var nulls = 0
        var empty = 0
        for row in 0..<result.rowCount {
            let inPlace = result.cells(row)
            let throughCalls = copy.cells(row)
            for column in 0..<result.columnCount {
                let cell = inPlace[Int(column)]
                let isNull = PQgetisnull(result.handle, row, column) != 0
                #expect(cell.len == (isNull ? -1 : PQgetlength(result.handle, row, column)), "row \(row), column \(column)")
                #expect(cell.value == PQgetvalue(result.handle, row, column))
                #expect(result.cell(row, column).value == cell.value)
                #expect(result.isNull(row, column) == isNull && copy.isNull(row, column) == isNull)
                let other = throughCalls[Int(column)]
                #expect(other.len == cell.len)
                #expect(PostgresResult.bytes(other).map(Array.init) == PostgresResult.bytes(cell).map(Array.init))
                if isNull { nulls += 1 } else if cell.len == 0 { empty += 1 }
            }
            #expect(result.int64(row, 0) == Int64(row) && copy.int64(row, 0) == Int64(row))
        }
        // Both kinds of cell were there to tell apart: NULL in columns 2 (n % 4 = 0), 3 (n even)
        // and 5; empty in columns 2 (n % 5 = 0, not n % 4 = 0) and 3 (n odd, n % 3 = 0).
        #expect(nulls == 25 + 50 + 100)
        #expect(empty == 15 + 17)
    }

    static let model = try! ObjectModel(entities: [
        EntityDescription(
            name: "Sample",
            attributes: AttributeType.allCases.map { AttributeDescription("v_\($0)", $0, isOptional: true) })
    ])

    /// Values of every attribute type (NULL in every other row, empty strings and data in some).
    static func value(_ type: AttributeType, _ row: Int) -> (any AttributeValueConvertible)? {
        guard row % 2 == 1 || row == 0 else { return nil }
        switch type {
        case .boolean: return row % 3 == 0
        case .integer16: return Int16(row * 7)
        case .integer32: return Int32(-row * 1000)
        case .integer64: return Int64(row) << 40
        case .float: return Float(row) / 4
        case .double: return Double(row) * 1.5
        case .decimal: return Decimal(string: "\(row).25")!
        case .date: return Date(timeIntervalSince1970: Double(row) * 86_400.5)
        case .string: return String(repeating: "é", count: row % 4)
        case .binary: return Data(repeating: UInt8(row), count: row % 3)
        case .uuid: return UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", row))!
        case .url: return URL(string: "https://example.com/\(row)")!
        }
    }

    /// Every object of `stack`, its values as text, one line per object, sorted.
    static func read(_ stack: PersistentStack) throws -> [String] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Sample")).map { object in
                try AttributeType.allCases.map { type in
                    let value: Any? = try object.value(forKey: "v_\(type)")
                    return value.map { "\($0)" } ?? "nil"
                }.joined(separator: " | ")
            }.sorted()
        }
    }

    @Test func theStoreReadsTheSameObjectsThroughLibpqsCallsAsInPlace() throws {
        let schema = PostgresTestServer.newSchema()
        let inPlace = try PostgresTestServer.stack(Self.model, schema, name: "InPlace", maximumConnections: 1)
        let context = inPlace.newBackgroundContext()
        try context.performAndWait {
            for row in 0..<40 {
                let object = try context.insert(entityName: "Sample")
                for type in AttributeType.allCases { try object.setValue(Self.value(type, row), forKey: "v_\(type)") }
            }
            try context.save()
        }
        let throughCalls = try PostgresTestServer.stack(Self.model, schema, name: "ThroughCalls", maximumConnections: 1)
        let store = try #require(throughCalls.coordinator.loadedStores.first as? PostgresStore)
        let fallback = try store.pool.withConnection { connection in
            connection.readsResultsInPlace = false
            return try connection.query("SELECT 1").rows == nil
        }
        #expect(fallback)
        #expect(
            try inPlace.coordinator.loadedStores.first.flatMap { $0 as? PostgresStore }?.pool.withConnection {
                try $0.query("SELECT 1").rows != nil
            } == true)
        let expected = try Self.read(inPlace)
        #expect(expected.count == 40)
        #expect(expected.contains { $0.contains("nil") } && expected.contains { !$0.contains("nil") })
        #expect(try Self.read(throughCalls) == expected)
    }
}
