/// What the stores' schema and write SQL needs of a dialect: column types, key lists, and the
/// insert that replaces a row with the same key. Everything else of the schema and of a write's
/// statements is the same text in both dialects (``StoreSchema``, ``StoreWritePlanner``).
extension SQLDialect {
    /// The type of key columns: `_pk`, `_version`, foreign keys, order columns, join-table columns.
    package var keyType: String { self == .sqlite ? "INTEGER" : "bigint" }

    /// The type of Skerry's own text columns (metadata).
    package var textType: String { self == .sqlite ? "TEXT" : "text" }

    /// The column type of an attribute type. Columns are nullable: required values are checked by
    /// the context before any SQL runs.
    ///
    /// SQLite: the type affinity of the attribute's storage form. PostgreSQL: the native type;
    /// `float` attributes are `double precision` like `double` ones, since a context holds a
    /// float's value as a Double and `real` would round a value the context still holds unrounded.
    package func columnType(_ type: AttributeType) -> String {
        switch self {
        case .sqlite:
            switch type {
            case .boolean, .integer16, .integer32, .integer64: return "INTEGER"
            case .float, .double, .date: return "REAL"
            case .decimal, .string, .url: return "TEXT"
            case .binary, .uuid: return "BLOB"
            }
        case .postgres:
            switch type {
            case .boolean: return "boolean"
            case .integer16: return "smallint"
            case .integer32: return "integer"
            case .integer64: return "bigint"
            case .float, .double: return "double precision"
            case .decimal: return "numeric"
            case .date: return "timestamptz"
            case .string, .url: return "text"
            case .binary: return "bytea"
            case .uuid: return "uuid"
            }
        }
    }

    /// What follows a join table's column list (SQLite keeps it without a rowid: the key is the pair).
    var joinTableOptions: String { self == .sqlite ? " WITHOUT ROWID" : "" }

    /// `column IN <the keys bound as one parameter>`: one prepared statement for any number of
    /// keys (SQLite: a JSON array read with `json_each`; PostgreSQL: a `bigint[]`). Bind
    /// ``keyList(_:)``.
    package func inKeys(_ column: String) -> String {
        self == .sqlite
            ? "\(SQLBuilder.quote(column)) IN (SELECT value FROM json_each(?))"
            : "\(SQLBuilder.quote(column)) = ANY(?::bigint[])"
    }

    /// The keys as the one parameter ``inKeys(_:)`` binds.
    package func keyList(_ keys: [Int64]) -> AttributeValue {
        let list = keys.map(String.init).joined(separator: ",")
        return .string(self == .sqlite ? "[" + list + "]" : "{" + list + "}")
    }

    /// `INSERT` of one row into `table` that replaces the row with the same `conflictColumns`
    /// (its key): SQLite's `INSERT OR REPLACE`; PostgreSQL's `ON CONFLICT … DO UPDATE` setting
    /// `updatedColumns` (the conflict's first column when none, so that the statement is valid).
    package func replacingInsert(into table: String, columns: [String], conflictColumns: [String], updatedColumns: [String]) -> String {
        let q = SQLBuilder.quote
        let values = Self.insertedValues(columns)
        guard self == .postgres else { return "INSERT OR REPLACE INTO \(q(table)) " + values }
        let set = (updatedColumns.isEmpty ? [columns[1]] : updatedColumns).map { "\(q($0)) = excluded.\(q($0))" }
        return "INSERT INTO \(q(table)) \(values) ON CONFLICT (\(conflictColumns.map(q).joined(separator: ", "))) DO UPDATE SET "
            + set.joined(separator: ", ")
    }

    /// `INSERT` of one row into `table` that, when a row with the same `conflictColumns` (its
    /// key) exists, sets only `updatedColumns` of it and keeps its other columns (nothing when
    /// none): `ON CONFLICT … DO UPDATE` / `DO NOTHING` in both dialects (SQLite's
    /// `INSERT OR REPLACE` would rewrite the whole row).
    package func upsert(into table: String, columns: [String], conflictColumns: [String], updatedColumns: [String]) -> String {
        let q = SQLBuilder.quote
        let values = Self.insertedValues(columns)
        let action =
            updatedColumns.isEmpty
            ? "DO NOTHING" : "DO UPDATE SET " + updatedColumns.map { "\(q($0)) = excluded.\(q($0))" }.joined(separator: ", ")
        return "INSERT INTO \(q(table)) \(values) ON CONFLICT (\(conflictColumns.map(q).joined(separator: ", "))) " + action
    }

    /// `(columns) VALUES (?, …)`: the columns of one inserted row and a parameter for each.
    private static func insertedValues(_ columns: [String]) -> String {
        "(\(columns.map(SQLBuilder.quote).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
    }

    /// The names of the indexes of the table bound as the one parameter.
    var indexNamesOfTable: String {
        self == .sqlite
            ? "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"
            : "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ?"
    }
}
