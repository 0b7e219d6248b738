/// Raw SQL conditions (``FetchPredicate/sql(_:_:)``): checked before they run, and evaluated on
/// unsaved objects' values as SQLite would on their rows.
extension SQLiteStore {
    /// Checks every raw SQL condition in `predicate`: it must be one expression (it never closes a
    /// parenthesis it did not open, has no `;`, no unterminated string or comment), read only
    /// its entity's attribute columns (SQLite's authorizer), use plain `?` parameters only, as
    /// many as it has values. Results are remembered per connection.
    /// - Throws: ``SkerryError/Code/invalidArgument`` saying what is wrong.
    func checkRawConditions(_ predicate: ResolvedPredicate?, _ connection: SQLiteConnection) throws(SkerryError) {
        guard let predicate else { return }
        switch predicate {
        case .and(let parts), .or(let parts):
            for part in parts { try checkRawConditions(part, connection) }
        case .not(let inner), .any(_, let inner), .all(_, let inner):
            try checkRawConditions(inner, connection)
        case .aggregate(let aggregate, _, _):
            try checkRawConditions(aggregate.filter, connection)
        case .sql(let condition, let values, let entity):
            let key = entity.name + "\u{0}" + condition
            let parameters: Int
            if let known = connection.checkedConditions[key] {
                parameters = known
            } else {
                parameters = try Self.checkRawCondition(condition, entity, connection)
                // Bounded like the statement cache: a program that builds many conditions cannot grow it.
                if connection.checkedConditions.count >= 256 { connection.checkedConditions.removeAll() }
                connection.checkedConditions[key] = parameters
            }
            guard parameters == values.count else {
                throw SkerryError(
                    .invalidArgument, "The raw SQL condition has \(parameters) '?' for \(values.count) value(s).",
                    entityName: entity.name)
            }
        case .constant, .comparison, .isIn, .between, .string, .isObject:
            return
        }
    }

    /// Checks one condition; returns its number of parameters.
    private static func checkRawCondition(
        _ condition: String, _ entity: EntityDescription,
        _ connection: SQLiteConnection
    ) throws(SkerryError) -> Int {
        func refuse(_ reason: String, _ sqlite: SQLiteError? = nil) -> SkerryError {
            SkerryError(
                .invalidArgument,
                "The raw SQL condition \"\(condition)\" is refused: \(reason). It must be one SQL expression on the attributes of '\(entity.name)', with '?' for its values.",
                entityName: entity.name, sqlite: sqlite)
        }
        if let problem = RawConditionShape.problem(condition) { throw refuse(problem) }
        let sql = "SELECT (\n\(condition)\n) FROM \(SQLBuilder.quote(entity.name))"
        let checked: CheckedStatement
        do {
            checked = try connection.prepareReadingOnly(sql, table: entity.name, columns: Set(entity.storedAttributes.map(\.name)))
        } catch {
            switch error {
            case .invalid(let sqlite): throw refuse("SQLite cannot read it (\(sqlite.message))", sqlite)
            case .notAuthorized(let what): throw refuse(what + ", and a condition may read only its entity's attribute columns")
            case .trailingText: throw refuse("text follows the expression")
            }
        }
        guard checked.namedParameters.isEmpty else {
            throw refuse("it names parameters (\(checked.namedParameters.joined(separator: ", "))); use '?'")
        }
        guard checked.columnCount == 1 else { throw refuse("it is not one expression") }
        return checked.parameterCount
    }

    func evaluate(
        condition: String, bindings: [AttributeValue], entity: EntityDescription,
        rows: [[AttributeValue]]
    ) throws(SkerryError) -> [Bool] {
        guard !rows.isEmpty else { return [] }
        // Each row binds its position and its values; stay well under SQLite's parameter limit.
        let perRow = entity.attributes.count + 1
        let chunk = max(1, (30_000 - bindings.count) / perRow)
        let predicate = ResolvedPredicate.sql(condition, bindings, entity)
        return try read(entity) { connection in
            try checkRawConditions(predicate, connection)
            var answers = Array(repeating: false, count: rows.count)
            for start in stride(from: 0, to: rows.count, by: chunk) {
                let end = min(start + chunk, rows.count)
                let statement = try connection.cachedStatement(Self.evaluationSQL(condition, entity, rowCount: end - start))
                var values = bindings
                values.reserveCapacity(bindings.count + (end - start) * perRow)
                for position in start..<end {
                    values.append(.int(Int64(position)))
                    values += rows[position]
                }
                try statement.bind(values)
                while try statement.step() {
                    answers[Int(statement.int64(at: 0))] = statement.int64(at: 1) != 0
                }
            }
            return answers
        }
    }

    /// `SELECT row, coalesce((condition), 0) FROM (<the rows as values, each column CAST to its
    /// declared type so that it has the column's affinity>) AS "<Entity>"`.
    static func evaluationSQL(_ condition: String, _ entity: EntityDescription, rowCount: Int) -> String {
        let q = SQLBuilder.quote
        let row = q("_skerry_row")
        var columns = ["column1 AS \(row)"]
        for (index, attribute) in entity.attributes.enumerated() {
            columns.append("CAST(column\(index + 2) AS \(columnType(attribute.type))) AS \(q(attribute.name))")
        }
        let tuple = "(" + Array(repeating: "?", count: entity.attributes.count + 1).joined(separator: ", ") + ")"
        let values = Array(repeating: tuple, count: rowCount).joined(separator: ", ")
        return
            "SELECT \(row), coalesce((\n\(condition)\n), 0) FROM (SELECT \(columns.joined(separator: ", ")) FROM (VALUES \(values))) AS \(q(entity.name))"
    }
}

/// The lexical check of a raw condition: SQL's strings, quoted names and comments are skipped;
/// outside them the text may not close a parenthesis it did not open, leave one open, or hold a
/// `;`.
package enum RawConditionShape {
    /// What is wrong with the text's shape; nil when nothing is.
    package static func problem(_ condition: String) -> String? {
        let bytes = Array(condition.utf8)
        var depth = 0
        var index = 0
        func skip(until terminator: [UInt8], from start: Int) -> Int? {
            var i = start
            while i + terminator.count <= bytes.count {
                if Array(bytes[i..<i + terminator.count]) == terminator { return i + terminator.count }
                i += 1
            }
            return nil
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                // A doubled quote inside is an escaped quote: the scan resumes after it as a new string.
                guard let end = skip(until: [byte], from: index + 1) else { return "a quote is not closed" }
                index = end
            case UInt8(ascii: "["):
                guard let end = skip(until: [UInt8(ascii: "]")], from: index + 1) else { return "a '[' is not closed" }
                index = end
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                index = skip(until: [UInt8(ascii: "\n")], from: index + 2) ?? bytes.count
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                guard let end = skip(until: Array("*/".utf8), from: index + 2) else { return "a comment is not closed" }
                index = end
            case UInt8(ascii: "("):
                depth += 1
                index += 1
            case UInt8(ascii: ")"):
                depth -= 1
                if depth < 0 { return "it closes a parenthesis it did not open" }
                index += 1
            case UInt8(ascii: ";"):
                return "it holds ';'"
            default:
                index += 1
            }
        }
        return depth == 0 ? nil : "a parenthesis is not closed"
    }
}
