import CLibPQ
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Results are read in place (libpq's own row table, through the mirror of its layout in CLibPQ's
/// shim.h) when the loaded libpq agrees with the mirror: every cell then reads as libpq's calls
/// read it, NULL told apart from empty values.
@Suite(.postgres) struct PostgresResultCellsTests {
    @Test func theLoadedLibpqKeepsResultsAsTheMirrorSays() {
        // If this fails, results are read through libpq's calls (correct, but slower): the
        // mirror in shim.h no longer matches this libpq's `struct pg_result`.
        #expect(PostgresResultLayout.isKnown)
        #expect(PostgresResultLayout.agreesWithLibpq())
    }

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
}
