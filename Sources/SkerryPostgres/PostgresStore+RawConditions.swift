import CLibPQ
import Foundation
import SkerryCore

/// Raw SQL conditions (``SkerryCore/FetchPredicate/sql(_:_:)``) in a PostgreSQL store: written in
/// PostgreSQL's SQL, with `?` for their values; checked for their shape and parameter count
/// before they run, run in read-only transactions, and evaluated on unsaved objects' values by
/// the database.
extension PostgresStore {
    /// Checks the text of every raw SQL condition in `predicate`: one expression (it never closes
    /// a parenthesis it did not open, has no `;`, no unterminated string or comment) with as many
    /// `?` as it has values. Returns the conditions, for ``validateRawConditions(_:_:)``.
    /// - Throws: ``SkerryError/Code/invalidArgument`` saying what is wrong.
    static func checkRawConditions(_ predicate: ResolvedPredicate?) throws(SkerryError) -> [(condition: String, entity: EntityDescription)]
    {
        guard let predicate else { return [] }
        switch predicate {
        case .and(let parts), .or(let parts):
            var found: [(condition: String, entity: EntityDescription)] = []
            for part in parts { found += try checkRawConditions(part) }
            return found
        case .not(let inner), .any(_, let inner), .all(_, let inner):
            return try checkRawConditions(inner)
        case .aggregate(let aggregate, _, _):
            return try checkRawConditions(aggregate.filter)
        case .sql(let condition, let values, let entity):
            if let problem = RawConditionShape.problem(condition) { throw refused(condition, entity, problem) }
            let scanned = PostgresSQL.scanParameters(condition)
            if scanned.numbered { throw refused(condition, entity, "it numbers its parameters; use '?'") }
            let parameters = scanned.count
            guard parameters == values.count else {
                throw SkerryError(
                    .invalidArgument, "The raw SQL condition has \(parameters) '?' for \(values.count) value(s).",
                    entityName: entity.name)
            }
            return [(condition, entity)]
        case .constant, .comparison, .isIn, .between, .string, .isObject:
            return []
        }
    }

    static func refused(_ condition: String, _ entity: EntityDescription, _ reason: String, _ error: PostgresError? = nil) -> SkerryError {
        var refusal = SkerryError(
            .invalidArgument,
            "The raw SQL condition \"\(condition)\" is refused: \(reason). It must be one SQL expression on the attributes of '\(entity.name)', with '?' for its values.",
            entityName: entity.name)
        refusal.underlyingError = error
        return refusal
    }

    /// Checks with the server that each condition reads only its entity's attribute columns and
    /// no other table: PostgreSQL prepares it over a derived table that has only those columns
    /// (so `_pk` or a misspelt column is refused), and the plan of that statement may name no
    /// other relation than the entity's table. Results are remembered per connection.
    ///
    /// One round trip per condition: the statement is prepared, explained and deallocated (it
    /// never runs, and a remembered condition is not checked again, so keeping it prepared would
    /// only fill the server's memory, with many parameters most of all).
    /// - Throws: ``SkerryError/Code/invalidArgument`` saying what is wrong.
    func validateRawConditions(
        _ conditions: [(condition: String, entity: EntityDescription)],
        _ connection: PostgresConnection
    ) throws {
        for (condition, entity) in conditions {
            let key = entity.name + "\u{0}" + condition
            if connection.checkedConditions.contains(key) { continue }
            let q = SQLBuilder.quote
            let columns = entity.storedAttributes.map { q($0.name) }.joined(separator: ", ")
            let sql =
                "SELECT 1 FROM (SELECT \(columns.isEmpty ? "1 AS \(q("_skerry_none"))" : columns) FROM \(q(entity.name))) AS \(q(entity.name)) WHERE (\n\(condition)\n)"
            let (text, parameterCount, _) = PostgresSQL.scanParameters(sql)
            let name = connection.newStatementName() // EXPLAIN EXECUTE names it
            let nulls = Array(repeating: "NULL", count: parameterCount).joined(separator: ", ")
            let explain = "EXPLAIN (FORMAT JSON) EXECUTE \(name)" + (nulls.isEmpty ? "" : "(\(nulls))")
            let (answers, failure) = connection.roundTrip(3, sql: sql) { handle in
                PQsendPrepare(handle, name, text, 0, nil) == 1
                    && PQsendQueryParams(handle, explain, 0, nil, nil, nil, nil, 1) == 1
                    && PQsendQueryParams(handle, "DEALLOCATE \(name)", 0, nil, nil, nil, nil, 1) == 1
            }
            if let failure {
                // A failure aborts an open transaction; a statement prepared but not deallocated
                // (its plan failed) is deallocated after the rollback.
                if connection.isInTransaction { try connection.execute("ROLLBACK") }
                if answers.count == 1 { try connection.execute("DEALLOCATE \(name)") }
                guard answers.count < 2 else { throw failure } // the condition was read; the DEALLOCATE failed
                throw Self.refused(condition, entity, "PostgreSQL cannot read it (\(failure.message))", failure)
            }
            let plan = answers[1]
            connection.record(plan, explain, nil)
            let relations = Self.relationNames(inPlan: plan.rowCount > 0 ? plan.text(0, 0) : "")
            if let other = relations.first(where: { $0 != entity.name }) {
                throw Self.refused(condition, entity, "it reads '\(other)', and a condition may read only its entity's attribute columns")
            }
            if connection.checkedConditions.count >= 256 { connection.checkedConditions.removeAll() }
            connection.checkedConditions.insert(key)
        }
    }

    /// The values of every `"Relation Name"` in a JSON query plan.
    static func relationNames(inPlan json: String) -> Set<String> {
        guard let data = json.data(using: .utf8), let plan = try? JSONSerialization.jsonObject(with: data) else { return [] }
        var names = Set<String>()
        func walk(_ node: Any) {
            if let dictionary = node as? [String: Any] {
                if let name = dictionary["Relation Name"] as? String { names.insert(name) }
                dictionary.values.forEach(walk)
            } else if let array = node as? [Any] {
                array.forEach(walk)
            }
        }
        walk(plan)
        return names
    }

    func evaluate(
        condition: String, bindings: [AttributeValue], entity: EntityDescription,
        rows: [[AttributeValue]]
    ) throws(SkerryError) -> [Bool] {
        guard !rows.isEmpty else { return [] }
        let predicate = ResolvedPredicate.sql(condition, bindings, entity)
        // Each row binds its position and its values: as many rows as one statement takes.
        let perRow = entity.attributes.count + 1
        let chunk = max(1, (PostgresConnection.maximumParameters - bindings.count) / perRow)
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
