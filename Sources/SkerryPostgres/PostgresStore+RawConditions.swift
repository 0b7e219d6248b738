import SkerryCore

/// Raw SQL conditions (``SkerryCore/FetchPredicate/sql(_:_:)``) in a PostgreSQL store: written in
/// PostgreSQL's SQL, with `?` for their values; checked for their shape and parameter count
/// before they run, run in read-only transactions, and evaluated on unsaved objects' values by
/// the database.
extension PostgresStore {
    /// Checks every raw SQL condition in `predicate`: one expression (it never closes a
    /// parenthesis it did not open, has no `;`, no unterminated string or comment) with as many
    /// `?` as it has values. Returns whether there was any.
    /// - Throws: ``SkerryError/Code/invalidArgument`` saying what is wrong.
    static func checkRawConditions(_ predicate: ResolvedPredicate?) throws(SkerryError) -> Bool {
        guard let predicate else { return false }
        switch predicate {
        case .and(let parts), .or(let parts):
            var found = false
            for part in parts where try checkRawConditions(part) { found = true }
            return found
        case .not(let inner), .any(_, let inner), .all(_, let inner):
            return try checkRawConditions(inner)
        case .aggregate(let aggregate, _, _):
            return try checkRawConditions(aggregate.filter)
        case .sql(let condition, let values, let entity):
            if let problem = RawConditionShape.problem(condition) {
                throw SkerryError(.invalidArgument, "The raw SQL condition \"\(condition)\" is refused: \(problem). It must be one SQL expression on the attributes of '\(entity.name)', with '?' for its values.",
                                  entityName: entity.name)
            }
            let parameters = PostgresSQL.parameterCount(condition)
            guard parameters == values.count else {
                throw SkerryError(.invalidArgument, "The raw SQL condition has \(parameters) '?' for \(values.count) value(s).",
                                  entityName: entity.name)
            }
            return true
        case .constant, .comparison, .isIn, .between, .string, .isObject:
            return false
        }
    }

    func evaluate(condition: String, bindings: [AttributeValue], entity: EntityDescription,
                  rows: [[AttributeValue]]) throws(SkerryError) -> [Bool] {
        guard !rows.isEmpty else { return [] }
        let predicate = ResolvedPredicate.sql(condition, bindings, entity)
        // Each row binds its position and its values; stay well under PostgreSQL's 65,535 parameters.
        let perRow = entity.attributes.count + 1
        let chunk = max(1, (30_000 - bindings.count) / perRow)
        return try read(entity, predicate: predicate) { connection in
            var answers = Array(repeating: false, count: rows.count)
            for start in stride(from: 0, to: rows.count, by: chunk) {
                let end = min(start + chunk, rows.count)
                var values = bindings
                values.reserveCapacity(bindings.count + (end - start) * perRow)
                for position in start..<end {
                    values.append(.int(Int64(position)))
                    values += rows[position]
                }
                let result = try connection.query(Self.evaluationSQL(condition, entity, rowCount: end - start), values)
                for row in 0..<result.rowCount {
                    answers[Int(result.int64(row, 0))] = result.value(row, 1, as: .boolean) == .bool(true)
                }
            }
            return answers
        }
    }

    /// `SELECT row, coalesce((condition), FALSE) FROM (VALUES (?::bigint, ?::<type>, …), …)
    /// AS "<Entity>"(_skerry_row, <attributes>)`: each value typed as its column is.
    static func evaluationSQL(_ condition: String, _ entity: EntityDescription, rowCount: Int) -> String {
        let q = SQLBuilder.quote
        let row = q("_skerry_row")
        let tuple = "(?::bigint" + entity.attributes.map { ", ?::\(columnType($0.type))" }.joined() + ")"
        let values = Array(repeating: tuple, count: rowCount).joined(separator: ", ")
        let names = ([row] + entity.attributes.map { q($0.name) }).joined(separator: ", ")
        return "SELECT \(row), coalesce((\n\(condition)\n), FALSE) FROM (VALUES \(values)) AS \(q(entity.name))(\(names))"
    }
}

extension PostgresSQL {
    /// The number of `?` parameter markers in `sql` outside literals and comments.
    static func parameterCount(_ sql: String) -> Int {
        let numbered = numberingParameters(sql)
        guard numbered != sql else { return 0 }
        // Each marker became `$n`: count the `$` that numbering added.
        return numbered.utf8.count(where: { $0 == UInt8(ascii: "$") }) - sql.utf8.count(where: { $0 == UInt8(ascii: "$") })
    }
}
