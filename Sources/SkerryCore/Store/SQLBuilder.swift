/// SQL text with the values to bind to its parameters, in order.
package struct BoundSQL {
    package var text: String
    package var bindings: [AttributeValue]
}

/// The SQL dialects ``SQLBuilder`` writes: SQLite's, and PostgreSQL's for the `SkerryPostgres`
/// store. Both use `?` for parameters (the PostgreSQL store numbers them when it prepares a
/// statement); they differ in literals, NULL-aware comparison, decimals, collation and ordering
/// of NULLs, and in the function that matches strings.
package enum SQLDialect: Sendable {
    case sqlite
    case postgres

    /// The literal for true and false.
    var trueLiteral: String { self == .sqlite ? "1" : "TRUE" }
    var falseLiteral: String { self == .sqlite ? "0" : "FALSE" }
}

/// Generates the SQL of the stores. Identifiers are quoted; values only ever appear as bound
/// parameters.
package enum SQLBuilder {
    /// Name of the primary-key column of every entity table.
    package static let primaryKeyColumn = "_pk"
    /// Name of the optimistic-locking version column of every entity table.
    package static let versionColumn = "_version"
    /// The column that names each row's entity (by code) in a read of an entity together with its
    /// sub-entities (``SQLiteStoreLayout/source(_:)``).
    package static let entityColumn = "_entity"

    /// `name` quoted as an SQL identifier. Model names are validated identifiers; quoting keeps
    /// keywords such as `order` usable as names.
    package static func quote(_ name: String) -> String {
        // Names hardly ever hold a quote: skip Foundation's search-and-replace for them.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `SELECT _pk, _version, <every stored attribute>, <foreign keys>, <extra expressions> FROM <entity>`.
    package static func selectRows(_ entity: EntityDescription, foreignKeyColumns: [String], extraExpressions: [String] = []) -> String {
        let columns = [primaryKeyColumn, versionColumn] + entity.storedAttributes.map(\.name) + foreignKeyColumns
        return "SELECT " + (columns.map(quote) + extraExpressions).joined(separator: ", ") + " FROM " + quote(entity.name)
    }

    /// The operand as bound for comparison with `key`'s column expression.
    static func operand(_ value: AttributeValue, for key: ResolvedKey) -> AttributeValue {
        if key.attribute.type == .decimal, let number = value.numericValue { return .double(number) }
        return value
    }

    /// A full query: `head`, then WHERE, ORDER BY (ties broken by primary key) and LIMIT/OFFSET.
    /// Conditions qualify columns with the entity's table name, so that subqueries can refer to it;
    /// `layout` says where relationships are kept.
    ///
    /// Sorting is the same in both dialects: NULL before any value in ascending order, strings by
    /// their bytes (PostgreSQL: `COLLATE "C"`, whatever the database's default collation).
    package static func query(
        _ head: String, _ query: StoreQuery, layout: SQLiteStoreLayout, ordered: Bool = true,
        dialect: SQLDialect = .sqlite
    ) -> BoundSQL {
        var sql = BoundSQL(text: head, bindings: [])
        let table = quote(query.entity.name)
        if let predicate = query.predicate {
            sql.text += " WHERE "
            var compiler = ConditionCompiler(layout: layout, dialect: dialect)
            compiler.append(predicate, alias: table, to: &sql)
        }
        if ordered {
            var compiler = ConditionCompiler(layout: layout, dialect: dialect)
            let keys = query.sortKeys.map { sortKey -> String in
                let expression = compiler.valueExpression(sortKey.key, alias: table)
                guard dialect == .postgres else { return expression + (sortKey.ascending ? " ASC" : " DESC") }
                let type = sortKey.key.attribute.type
                let collated = type == .string || type == .url ? expression + " COLLATE \"C\"" : expression
                return collated + (sortKey.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
            }
            sql.text += " ORDER BY " + (keys + ["\(table).\(quote(primaryKeyColumn))"]).joined(separator: ", ")
        }
        if query.limit > 0 || query.offset > 0 {
            sql.text += " LIMIT ? OFFSET ?"
            // No limit: -1 for SQLite, NULL (LIMIT ALL) for PostgreSQL.
            sql.bindings.append(query.limit > 0 ? .int(Int64(query.limit)) : (dialect == .sqlite ? .int(-1) : .null))
            sql.bindings.append(.int(Int64(query.offset)))
        }
        return sql
    }

    /// Compiles resolved predicates to SQL conditions, naming the tables of subqueries `t1`, `t2`…
    struct ConditionCompiler {
        /// Where the store keeps relationships.
        let layout: SQLiteStoreLayout
        /// The SQL dialect written.
        let dialect: SQLDialect
        private var aliases = 0

        init(layout: SQLiteStoreLayout, dialect: SQLDialect = .sqlite) {
            self.layout = layout
            self.dialect = dialect
        }

        /// The parameter marker for `value` compared with `key`'s column. PostgreSQL infers a
        /// parameter's type from the column, and a fractional number cannot be sent as an integer:
        /// a floating-point value compared with an integer or decimal column is sent as `numeric`,
        /// which compares exactly with both, as SQLite does.
        func marker(_ value: AttributeValue, for key: ResolvedKey?) -> String {
            guard dialect == .postgres, case .double = value else { return "?" }
            let type = key?.attribute.type
            return type == .double || type == .float ? "?" : "?::numeric"
        }

        private mutating func newAlias() -> String {
            aliases += 1
            return "t\(aliases)"
        }

        /// The value of `key` for the row of `alias`: its column, or a scalar subquery through the
        /// key's to-one relationships. Decimals, stored as exact text in SQLite, compare and sort by
        /// value there; PostgreSQL's `numeric` compares by value itself.
        mutating func valueExpression(_ key: ResolvedKey, alias: String) -> String {
            guard let hop = key.path.first else {
                let column = "\(alias).\(quote(key.attribute.name))"
                return key.attribute.type == .decimal && dialect == .sqlite ? "CAST(\(column) AS REAL)" : column
            }
            let next = newAlias()
            var rest = key
            rest.path.removeFirst()
            let inner = valueExpression(rest, alias: next)
            return "(SELECT \(inner) FROM \(layout.source(hop.destination)) AS \(next) WHERE \(join(hop, from: alias, to: next)))"
        }

        /// The condition that the row `to` is related to the row `from` through `relationship`.
        private func join(_ relationship: ResolvedRelationship, from: String, to: String) -> String {
            let key = quote(primaryKeyColumn)
            switch layout.storage(relationship.entity, relationship.index) {
            case nil, .transient?:
                // nil is unreachable: a store holds the destinations of its entities'
                // relationships (checked when it loads), and a predicate is resolved against the
                // store's model. A transient relationship relates nothing in the store.
                return dialect.falseLiteral
            case .foreignKey(let column):
                return "\(to).\(key) = \(from).\(quote(column))"
            case .inverseForeignKey(_, let column, _):
                return "\(to).\(quote(column)) = \(from).\(key)"
            case .joinTable(let table, let source, let target, _):
                return "\(to).\(key) IN (SELECT \(quote(target)) FROM \(quote(table)) WHERE \(quote(source)) = \(from).\(key))"
            }
        }

        /// Appends `predicate` as an SQL condition on the row of `alias`. The result is never NULL
        /// where it matters: the operand of NOT is wrapped in `coalesce(…, 0)`, so that a comparison
        /// with NULL counts as false everywhere, as in-memory evaluation has it.
        mutating func append(_ predicate: ResolvedPredicate, alias: String, to sql: inout BoundSQL) {
            switch predicate {
            case .constant(let value):
                sql.text += value ? dialect.trueLiteral : dialect.falseLiteral
            case .comparison(let key, let op, let value) where dialect == .postgres && (op == .equal || op == .notEqual):
                // `=` where the value is known (an index serves it), NULL-aware otherwise: SQLite's
                // `IS` / `IS NOT`, which in-memory evaluation follows (nil != "x" is true).
                let expression = valueExpression(key, alias: alias)
                switch (op, value.isNull) {
                case (.equal, true): sql.text += "\(expression) IS NULL"
                case (.notEqual, true): sql.text += "\(expression) IS NOT NULL"
                case (.equal, false):
                    sql.text += "\(expression) = \(marker(operand(value, for: key), for: key))"
                    sql.bindings.append(operand(value, for: key))
                default:
                    sql.text += "\(expression) IS DISTINCT FROM \(marker(operand(value, for: key), for: key))"
                    sql.bindings.append(operand(value, for: key))
                }
            case .comparison(let key, let op, let value):
                let sqlOperator: String
                switch op {
                case .equal: sqlOperator = "IS"
                case .notEqual: sqlOperator = "IS NOT"
                case .lessThan: sqlOperator = "<"
                case .lessThanOrEqual: sqlOperator = "<="
                case .greaterThan: sqlOperator = ">"
                case .greaterThanOrEqual: sqlOperator = ">="
                }
                sql.text += "\(valueExpression(key, alias: alias)) \(sqlOperator) \(marker(operand(value, for: key), for: key))"
                sql.bindings.append(operand(value, for: key))
            case .isIn(let key, let values):
                guard !values.isEmpty else {
                    sql.text += dialect.falseLiteral
                    return
                }
                if values.count > SQLBuilder.paddedListLimit {
                    // A long list is one parameter: a parameter each would pass the stores' limits.
                    let expression = valueExpression(key, alias: alias)
                    guard let list = dialect.valueList(values.map { operand($0, for: key) }, comparedWith: key.attribute.type) else {
                        sql.text += dialect.falseLiteral
                        return
                    }
                    sql.text += expression + " " + list.condition
                    sql.bindings.append(list.binding)
                    return
                }
                let listed = SQLBuilder.paddedList(values)
                sql.text +=
                    valueExpression(key, alias: alias) + " IN ("
                    + listed.map { marker(operand($0, for: key), for: key) }.joined(separator: ", ") + ")"
                sql.bindings += listed.map { operand($0, for: key) }
            case .between(let key, let lower, let upper):
                sql.text +=
                    "\(valueExpression(key, alias: alias)) BETWEEN \(marker(operand(lower, for: key), for: key)) AND \(marker(operand(upper, for: key), for: key))"
                sql.bindings += [operand(lower, for: key), operand(upper, for: key)]
            case .string(let key, let op, let pattern, let options) where dialect == .postgres:
                // The function the PostgreSQL store creates in its schema (same arguments).
                sql.text += "skerry_string_match(?, ?, (\(valueExpression(key, alias: alias)))::text, ?)"
                sql.bindings += [.int(Int64(op.rawValue)), .int(Int64(options.rawValue)), .string(pattern)]
            case .string(let key, let op, let pattern, let options):
                sql.text += "skerry_string_match(?, ?, \(valueExpression(key, alias: alias)), ?)"
                sql.bindings += [.int(Int64(op.rawValue)), .int(Int64(options.rawValue)), .string(pattern)]
            case .and(let predicates):
                appendJoined(predicates, separator: " AND ", empty: dialect.trueLiteral, alias: alias, to: &sql)
            case .or(let predicates):
                appendJoined(predicates, separator: " OR ", empty: dialect.falseLiteral, alias: alias, to: &sql)
            case .not(.not(let inner)):
                // NOT NOT x is x where the answer is used: NULL counts as false either way. Keeps
                // the SQL shallow (SQLite's parser has a fixed stack).
                append(inner, alias: alias, to: &sql)
            case .not(let inner):
                sql.text += "NOT coalesce("
                append(inner, alias: alias, to: &sql)
                sql.text += ", \(dialect.falseLiteral))"
            case .any(let relationship, let inner):
                let member = newAlias()
                sql.text +=
                    "EXISTS (SELECT 1 FROM \(layout.source(relationship.destination)) AS \(member) WHERE \(join(relationship, from: alias, to: member)) AND "
                append(inner, alias: member, to: &sql)
                sql.text += ")"
            case .all(let relationship, let inner):
                let member = newAlias()
                sql.text +=
                    "NOT EXISTS (SELECT 1 FROM \(layout.source(relationship.destination)) AS \(member) WHERE \(join(relationship, from: alias, to: member)) AND NOT coalesce("
                append(inner, alias: member, to: &sql)
                sql.text += ", \(dialect.falseLiteral)))"
            case .sql(let condition, let values, _):
                // On lines of its own, so that a trailing `--` comment ends with its line.
                sql.text += "(\n\(condition)\n)"
                sql.bindings += values
            case .aggregate(let aggregate, let op, let value):
                appendAggregate(aggregate, alias: alias, to: &sql)
                if dialect == .postgres && value.isNull && (op == .equal || op == .notEqual) {
                    sql.text += op == .equal ? " IS NULL" : " IS NOT NULL"
                    return
                }
                let sqlOperator: String
                switch op {
                case .equal: sqlOperator = value.isNull ? "IS" : "="
                case .notEqual: sqlOperator = value.isNull ? "IS NOT" : "<>"
                default: sqlOperator = op.rawValue
                }
                let bound = aggregate.key.map { operand(value, for: $0) } ?? value
                sql.text +=
                    " \(sqlOperator) \(aggregate.key == nil || aggregate.function == .count || aggregate.function == .average ? marker(bound, for: nil) : marker(bound, for: aggregate.key))"
                sql.bindings.append(bound)
            case .isObject(let ids):
                let keys = SQLBuilder.paddedList(ids.filter { !$0.isTemporary }.map(\.key))
                guard !keys.isEmpty else {
                    sql.text += dialect.falseLiteral
                    return
                }
                if keys.count > SQLBuilder.paddedListLimit {
                    // A long list (a batch delete by many IDs) is one parameter: a list of a
                    // parameter each would pass SQLite's limit on parameters.
                    sql.text += "\(alias)." + dialect.inKeys(SQLBuilder.primaryKeyColumn)
                    sql.bindings.append(dialect.keyList(keys))
                    return
                }
                sql.text +=
                    "\(alias).\(quote(primaryKeyColumn)) IN (" + Array(repeating: "?", count: keys.count).joined(separator: ", ") + ")"
                sql.bindings += keys.map { .int($0) }
            }
        }

        /// The value of an aggregate for the row of `alias`: a scalar subquery over the members
        /// (NULL when a to-one step before the collection is empty).
        private mutating func appendAggregate(_ aggregate: ResolvedAggregate, alias: String, to sql: inout BoundSQL) {
            if let hop = aggregate.path.first {
                let next = newAlias()
                let rest = ResolvedAggregate(
                    path: Array(aggregate.path.dropFirst()), collection: aggregate.collection,
                    function: aggregate.function, key: aggregate.key, filter: aggregate.filter)
                sql.text += "(SELECT "
                appendAggregate(rest, alias: next, to: &sql)
                sql.text += " FROM \(layout.source(hop.destination)) AS \(next) WHERE \(join(hop, from: alias, to: next)))"
                return
            }
            let member = newAlias()
            let value = aggregate.key.map { valueExpression($0, alias: member) } ?? "*"
            let expression: String
            switch aggregate.function {
            case .count: expression = "count(*)"
            case .sum: expression = "coalesce(sum(\(value)), 0)"
            case .average: expression = "avg(\(value))"
            case .min: expression = "min(\(value))"
            case .max: expression = "max(\(value))"
            }
            let collection = aggregate.collection
            sql.text +=
                "(SELECT \(expression) FROM \(layout.source(collection.destination)) AS \(member) WHERE \(join(collection, from: alias, to: member))"
            if let filter = aggregate.filter {
                sql.text += " AND coalesce("
                append(filter, alias: member, to: &sql)
                sql.text += ", \(dialect.falseLiteral))"
            }
            sql.text += ")"
        }

        /// `AND`/`OR` of the predicates, grouped in a balanced tree of parentheses: SQLite limits an
        /// expression's depth (1,000), and a flat chain of a thousand terms is a thousand deep.
        private mutating func appendJoined(
            _ predicates: [ResolvedPredicate], separator: String, empty: String,
            alias: String, to sql: inout BoundSQL
        ) {
            guard !predicates.isEmpty else {
                sql.text += empty
                return
            }
            appendBalanced(predicates[...], separator: separator, alias: alias, to: &sql)
        }

        private mutating func appendBalanced(
            _ predicates: ArraySlice<ResolvedPredicate>, separator: String,
            alias: String, to sql: inout BoundSQL
        ) {
            guard predicates.count > 1 else {
                // Every predicate compiles to an expression that binds tighter than AND and OR.
                append(predicates[predicates.startIndex], alias: alias, to: &sql)
                return
            }
            let middle = predicates.startIndex + predicates.count / 2
            sql.text += "("
            appendBalanced(predicates[..<middle], separator: separator, alias: alias, to: &sql)
            sql.text += separator
            appendBalanced(predicates[middle...], separator: separator, alias: alias, to: &sql)
            sql.text += ")"
        }
    }

    /// `INSERT INTO <entity> (_pk, _version, <every stored attribute>, <foreign keys>) VALUES (?, 1, ?, …)`.
    package static func insert(_ entity: EntityDescription, foreignKeyColumns: [String]) -> String {
        let columns = [primaryKeyColumn, versionColumn] + entity.storedAttributes.map(\.name) + foreignKeyColumns
        let values = ["?", "1"] + Array(repeating: "?", count: entity.storedAttributeCount + foreignKeyColumns.count)
        return
            "INSERT INTO \(quote(entity.name)) (\(columns.map(quote).joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
    }

    /// `UPDATE … SET _version = _version + 1, <changed columns> WHERE _pk = ? AND _version = ?`.
    package static func update(_ entity: EntityDescription, changedColumns: [String]) -> String {
        let assignments =
            ["\(quote(versionColumn)) = \(quote(versionColumn)) + 1"]
            + changedColumns.map { "\(quote($0)) = ?" }
        return
            "UPDATE \(quote(entity.name)) SET \(assignments.joined(separator: ", ")) WHERE \(quote(primaryKeyColumn)) = ? AND \(quote(versionColumn)) = ?"
    }

    /// `DELETE FROM <entity> WHERE _pk = ?`, and `AND _version = ?` when checking the version.
    package static func deleteRow(_ entity: EntityDescription, checkingVersion: Bool) -> String {
        "DELETE FROM \(quote(entity.name)) WHERE \(quote(primaryKeyColumn)) = ?"
            + (checkingVersion ? " AND \(quote(versionColumn)) = ?" : "")
    }

    /// `SELECT 1 FROM <entity> WHERE _pk = ?`.
    static func rowExists(_ entity: EntityDescription) -> String {
        "SELECT 1 FROM \(quote(entity.name)) WHERE \(quote(primaryKeyColumn)) = ?"
    }

    /// Lists of up to this many values are padded to a power of two (``paddedList(_:)``).
    package static let paddedListLimit = 1024

    /// `values` lengthened to the next power of two (up to ``paddedListLimit`` values) by repeating
    /// the last one, which changes nothing an `IN (…)` list matches: lists of any length then
    /// compile to one of a few statements (11 up to 1,024 values) instead of one per length, so
    /// that `isIn` predicates with lists of varying length reuse the statements the stores keep
    /// prepared rather than filling their caches with one-off statements. Longer lists are bound
    /// as one parameter instead (``SQLDialect/valueList(_:comparedWith:)``, ``SQLDialect/inKeys(_:)``).
    static func paddedList<Value>(_ values: [Value]) -> [Value] {
        guard let last = values.last, values.count <= paddedListLimit else { return values }
        var size = 1
        while size < values.count { size *= 2 }
        return values + Array(repeating: last, count: size - values.count)
    }

    /// Statements with more parameters than this are not kept prepared (``keepsPrepared(parameterCount:)``).
    package static let preparedParameterLimit = paddedListLimit + 64

    /// Whether a store keeps a statement with `parameterCount` parameters prepared for reuse: both
    /// stores' statement caches ask this. A statement with that many parameters (a raw SQL
    /// condition with a long list) is unlikely to run again, and kept it would crowd the cache
    /// (which is emptied when full, hot statements included); preparing it again costs little
    /// next to binding that many values.
    package static func keepsPrepared(parameterCount: Int) -> Bool {
        parameterCount <= preparedParameterLimit
    }

    /// `column IN (…)` for the keys of a JSON array bound as the one parameter, so that one
    /// prepared statement serves any number of keys.
    static func inKeys(_ column: String) -> String {
        "\(quote(column)) IN (SELECT value FROM json_each(?))"
    }

    /// The keys as the JSON array ``inKeys(_:)`` binds.
    static func jsonKeys(_ keys: [Int64]) -> AttributeValue {
        .string("[" + keys.map(String.init).joined(separator: ",") + "]")
    }
}
