/// The statement of the previous row of a bulk write, kept while the following rows need the
/// same SQL: the writer then builds the SQL text and looks the statement up once per run of
/// alike rows instead of once per row.
///
/// `Shape` is whatever determines the SQL (an entity, the columns changed); the statement is
/// rebuilt whenever it differs from the previous row's.
struct RepeatedStatement<Shape: Equatable> {
    private var last: (shape: Shape, statement: SQLiteStatement)?

    /// The statement for `shape`: the previous one if its shape was the same, else `make()`.
    mutating func statement(for shape: Shape, _ make: () throws(SQLiteError) -> SQLiteStatement) throws(SQLiteError) -> SQLiteStatement {
        if let last, last.shape == shape { return last.statement }
        let statement = try make()
        last = (shape, statement)
        return statement
    }
}
