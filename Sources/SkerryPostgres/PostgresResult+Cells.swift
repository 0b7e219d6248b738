import CLibPQ
import Foundation

/// How this process's libpq keeps a result's rows, checked once: whether results can be read in
/// place through `SkerryPQResultHead` and `SkerryPQCell` (CLibPQ's shim.h, a mirror of the start
/// of libpq's internal `struct pg_result` and of its `PGresAttValue`).
///
/// Reading a cell in place is two loads (its length, -1 for NULL, and its bytes); through libpq's
/// public calls it is two or three calls, each checking the row and column (`PQgetisnull`,
/// `PQgetlength`, `PQgetvalue`): about 55 instructions per cell, a quarter of a bulk fetch's
/// own work on a row of ten integers. The mirror is not libpq's public interface, so it is used
/// only when the loaded libpq agrees with it on a result built through the public API
/// (``isKnown``), and for each result only when the head's row and column counts are the ones
/// libpq's calls report.
enum PostgresResultLayout {
    /// Whether the loaded libpq keeps results as the mirror says (checked on first use): a
    /// version the mirror was made for (``checkedVersions``) that agrees with it on a result built
    /// through its public calls.
    static let isKnown: Bool = checkedVersions.contains(Int(PQlibVersion())) && agreesWithLibpq()

    /// The versions of libpq (`PQlibVersion()`: 150018 for 15.18) the check is made for: the
    /// fields the mirror reads have kept their order from 9.0 to 18 (19 is let in, the check
    /// comparing every count and pointer before the mirror is used). Outside them the check is not
    /// made (it follows pointers at the mirror's offsets, which a rearranged layout could make
    /// wild), and cells are read through libpq's calls.
    static let checkedVersions = 90_000..<200_000

    /// The table of `handle`'s rows (`rowCount` pointers, each to `columnCount` cells), or nil
    /// when the layout is not known, the head disagrees with libpq's counts, or there is no row.
    static func rows(of handle: OpaquePointer, rowCount: Int32, columnCount: Int32) -> UnsafePointer<UnsafeMutablePointer<SkerryPQCell>?>? {
        guard isKnown else { return nil }
        // In bounds: a PGresult is far larger than its head (which is its first 24 bytes).
        let head = UnsafeRawPointer(handle).load(as: SkerryPQResultHead.self)
        guard head.ntups == rowCount, head.numAttributes == columnCount, rowCount > 0, let tuples = head.tuples else { return nil }
        return UnsafePointer(tuples)
    }

    /// Builds a result of three rows and two columns (values of several lengths, empty, NULL)
    /// through libpq's public calls and checks that the mirror reads the same counts, column
    /// names, lengths and bytes as `PQntuples`, `PQnfields`, `PQfname`, `PQgetisnull`,
    /// `PQgetlength` and `PQgetvalue`.
    static func agreesWithLibpq() -> Bool {
        guard let result = PQmakeEmptyPGresult(nil, PGRES_TUPLES_OK) else { return false }
        defer { PQclear(result) }
        let first = strdup("a")
        let second = strdup("b")
        defer {
            free(first)
            free(second)
        }
        // libpq copies the names (a null one would crash it).
        guard first != nil, second != nil else { return false }
        var descriptions = [first, second].map {
            PGresAttDesc(name: $0, tableid: 0, columnid: 0, format: 1, typid: 0, typlen: -1, atttypmod: -1)
        }
        guard PQsetResultAttrs(result, 2, &descriptions) != 0 else { return false }
        // (row, column, offset in `bytes`, length); -1: NULL.
        let cells: [(Int32, Int32, Int, Int32)] = [(0, 0, 0, 8), (0, 1, 0, -1), (1, 0, 8, 0), (1, 1, 8, 3), (2, 0, 0, -1), (2, 1, 3, 1)]
        var bytes: [CChar] = [1, 2, 0, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        let stored = bytes.withUnsafeMutableBufferPointer { buffer in
            cells.allSatisfy { row, column, offset, length in
                PQsetvalue(result, row, column, length < 0 ? nil : buffer.baseAddress! + offset, length) != 0
            }
        }
        guard stored else { return false }
        let head = UnsafeRawPointer(result).load(as: SkerryPQResultHead.self)
        guard head.ntups == 3, PQntuples(result) == 3, head.numAttributes == 2, PQnfields(result) == 2,
            let attributes = head.attDescs, attributes[0].name == PQfname(result, 0), attributes[1].name == PQfname(result, 1),
            let tuples = head.tuples
        else { return false }
        for row: Int32 in 0..<3 {
            guard let values = tuples[Int(row)] else { return false }
            for column: Int32 in 0..<2 {
                let cell = values[Int(column)]
                let length = PQgetisnull(result, row, column) != 0 ? -1 : PQgetlength(result, row, column)
                guard cell.len == length, cell.value != nil, cell.value == PQgetvalue(result, row, column) else { return false }
            }
        }
        return true
    }
}

extension PostgresResult {
    /// The cells of row `row` (`columnCount` of them): libpq's own, read in place, or (when the
    /// layout is not known) a copy read through libpq's calls into `scratch`, valid until the
    /// next call of this method. Either way, valid while the result lives.
    ///
    /// A caller reads only columns below `columnCount` (checked once per result by the caller).
    @inline(__always)
    func cells(_ row: Int32) -> UnsafePointer<SkerryPQCell> {
        // Release check: libpq's table has `rowCount` entries; a read past it would read stray memory.
        precondition(UInt32(bitPattern: row) < UInt32(bitPattern: rowCount), "PostgreSQL result row out of range")
        // `rows` has an entry for each row, each pointing to `columnCount` cells (checked when the
        // result was made: `PostgresResultLayout.rows`).
        if let rows { return UnsafePointer(rows[Int(row)]!) }
        return cellsThroughLibpq(row)
    }

    /// The cell at (`row`, `column`).
    @inline(__always)
    func cell(_ row: Int32, _ column: Int32) -> SkerryPQCell {
        // Release checks, as in `cells(_:)`: each row has `columnCount` cells. Both paths check
        // the row (libpq's calls would answer NULL for a row past the end, the table would trap).
        precondition(UInt32(bitPattern: column) < UInt32(bitPattern: columnCount), "PostgreSQL result column out of range")
        precondition(UInt32(bitPattern: row) < UInt32(bitPattern: rowCount), "PostgreSQL result row out of range")
        guard let rows else { return cellThroughLibpq(row, column) }
        return rows[Int(row)]![Int(column)]
    }

    /// The bytes of `cell`, or nil for NULL.
    @inline(__always)
    static func bytes(_ cell: SkerryPQCell) -> UnsafeRawBufferPointer? {
        cell.len < 0 ? nil : UnsafeRawBufferPointer(start: cell.value, count: Int(cell.len))
    }

    /// The cells of row `row` read through libpq's calls into `scratch`.
    @inline(never)
    private func cellsThroughLibpq(_ row: Int32) -> UnsafePointer<SkerryPQCell> {
        let cells = scratch ?? UnsafeMutablePointer<SkerryPQCell>.allocate(capacity: max(Int(columnCount), 1))
        scratch = cells
        for column in 0..<columnCount { (cells + Int(column)).initialize(to: cellThroughLibpq(row, column)) }
        return UnsafePointer(cells)
    }

    /// The cell at (`row`, `column`) through libpq's calls.
    private func cellThroughLibpq(_ row: Int32, _ column: Int32) -> SkerryPQCell {
        let isNull = PQgetisnull(handle, row, column) != 0
        return SkerryPQCell(len: isNull ? -1 : PQgetlength(handle, row, column), value: PQgetvalue(handle, row, column))
    }
}
