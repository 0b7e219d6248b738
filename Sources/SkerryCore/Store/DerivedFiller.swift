import Foundation

/// Computes one derived attribute for every row of a store's table, as a save computes it: in
/// SQL where the value is stored as is, in Swift where a save converts it (a number into another
/// number type) or applies a text function. Only the rows whose value changes are written (a
/// migration that computes an unchanged value again rewrites no row).
struct DerivedFiller {
    /// A derivation the filler cannot compute for stored rows, and why.
    struct Uncomputable: Error {
        let why: String
    }

    /// A value computed for the row `key` that the attribute's type cannot hold (a save of its
    /// object fails the same way).
    struct Unconvertible: Error {
        let key: Int64
        let value: AttributeValue
    }

    let dialect: SQLDialect
    let entities: [EntityDescription]
    private let layout: RelationshipLayout
    private let byName: [String: EntityDescription]
    private let now = Date()

    init(dialect: SQLDialect, entities: [EntityDescription]) {
        self.dialect = dialect
        self.entities = entities
        self.layout = RelationshipLayout(entities: entities)
        self.byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private static let q = SQLBuilder.quote
    private static let pk = SQLBuilder.quote(SQLBuilder.primaryKeyColumn)

    /// `a` and `b` differ, NULL counting as a value (SQLite's `IS NOT`, PostgreSQL's
    /// `IS DISTINCT FROM`).
    private func differ(_ a: String, _ b: String) -> String {
        dialect == .sqlite ? "\(a) IS NOT \(b)" : "\(a) IS DISTINCT FROM \(b)"
    }

    /// Whether a value of type `reached` is stored as is in an attribute of type `type`: the
    /// same type, or an integer into an integer at least as wide (as a save converts it).
    private static func fits(_ reached: AttributeType, into type: AttributeType) -> Bool {
        let widths: [AttributeType: Int] = [.integer16: 16, .integer32: 32, .integer64: 64]
        if reached == type { return true }
        guard let from = widths[reached], let to = widths[type] else { return false }
        return from <= to
    }

    /// Rows read at a time where a value is computed in Swift (the memory a table's values take).
    static let pageSize = 2_048
    /// Rows written by one statement where a value is computed in Swift: 3 parameters each, well
    /// inside both stores' limits (SQLite: 32,766; PostgreSQL: 7,000 in this package).
    static let batchSize = 256

    /// The types whose values a save converts into one another (``SchemaMapping/convert(_:to:)``).
    private static let numbers: Set<AttributeType> = [.integer16, .integer32, .integer64, .double, .float, .decimal, .boolean]

    /// Computes `attribute` (derived by `derivation`) of `entity` for every row.
    /// - Throws: ``Uncomputable`` for a derivation the filler cannot compute for stored rows;
    ///   ``Unconvertible`` for a row whose value the attribute cannot hold; the connection's
    ///   errors.
    func fill(
        _ attribute: AttributeDescription, of entity: EntityDescription, _ derivation: AttributeDerivation,
        _ connection: some StoreSQLConnection
    ) throws {
        let q = Self.q, pk = Self.pk
        let table = q(entity.name), column = q(attribute.name)
        var aliases = 0
        /// The SQL of the value at `path` for the row `alias` of `entity`, and its attribute.
        func value(_ path: [String], of entity: EntityDescription, _ alias: String) throws -> (sql: String, type: AttributeType) {
            if path.count == 1 {
                guard let reached = entity.attribute(named: path[0]), !reached.isTransient else {
                    throw Uncomputable(why: "'\(entity.name)' has no stored attribute '\(path[0])'")
                }
                return ("\(alias).\(q(path[0]))", reached.type)
            }
            guard let relationship = entity.relationship(named: path[0]), !relationship.isToMany,
                let destination = byName[relationship.destinationEntityName]
            else { throw Uncomputable(why: "'\(entity.name).\(path[0])' is no to-one relationship") }
            var parts: [String] = [], type: AttributeType?
            for member in entities where member.isKind(of: destination) {
                aliases += 1
                let inner = "_d\(aliases)"
                let reached = try value(Array(path.dropFirst()), of: member, inner)
                type = reached.type
                switch layout.storage[entity.name]?[relationship.name] {
                case .foreignKey(let key)?:
                    parts.append("(SELECT \(reached.sql) FROM \(q(member.name)) AS \(inner) WHERE \(inner).\(pk) = \(alias).\(q(key)))")
                case .inverseForeignKey(_, let key, _)?:
                    parts.append("(SELECT \(reached.sql) FROM \(q(member.name)) AS \(inner) WHERE \(inner).\(q(key)) = \(alias).\(pk))")
                default:
                    throw Uncomputable(why: "'\(entity.name).\(relationship.name)' is not stored")
                }
            }
            guard let type else { throw Uncomputable(why: "'\(relationship.destinationEntityName)' is not in the store") }
            return (parts.count == 1 ? parts[0] : "COALESCE(\(parts.joined(separator: ", ")))", type)
        }
        /// Sets every row's value to `expression`, where it differs.
        func set(_ expression: String) throws {
            try connection.execute("UPDATE \(table) SET \(column) = \(expression) WHERE \(differ(column, "(\(expression))"))")
        }
        /// Sets every row's value to `compute` of the value of `expression` (of type `type`),
        /// converted to the attribute's type as a save converts it, where it differs: the values
        /// read as the store reads them (a Double exactly, not as text), ``pageSize`` rows at a
        /// time in key order (the first row whose value the attribute cannot hold fails),
        /// computed in Swift, and the changed ones written ``batchSize`` rows a statement.
        func setInSwift(_ expression: String, _ type: AttributeType, _ compute: (AttributeValue) -> AttributeValue = { $0 }) throws {
            var after = Int64.min, changed: [(key: Int64, value: AttributeValue)] = []
            /// Writes the changed rows `batchSize` at a time, the last fewer when `all`.
            func write(all: Bool) throws {
                while changed.count >= Self.batchSize || (all && !changed.isEmpty) {
                    let batch = changed.prefix(Self.batchSize)
                    try connection.run(
                        batchUpdate(batch.count), batch.flatMap { [.int($0.key), $0.value] } + batch.map { .int($0.key) })
                    changed.removeFirst(batch.count)
                }
            }
            while true {
                let rows = try connection.valueRows(
                    "SELECT \(pk), (\(expression)), \(column) FROM \(table) WHERE \(pk) > ? ORDER BY \(pk) LIMIT \(Self.pageSize)",
                    [.int(after)], types: [.integer64, type, attribute.type])
                for row in rows {
                    guard case .int(let key)? = row[0] else { throw Uncomputable(why: "a row has no integer key") }
                    after = key
                    guard let reached = row[1] else {
                        throw Uncomputable(why: "the stored value of row \(key) is no \(type)")
                    }
                    let computed = compute(reached)
                    guard let value = SchemaMapping.convert(computed, to: attribute.type) else {
                        throw Unconvertible(key: key, value: computed)
                    }
                    // A stored value that is no value of the attribute's type (nil) is rewritten.
                    if value != row[2] { changed.append((key, value)) }
                }
                try write(all: rows.count < Self.pageSize)
                if rows.count < Self.pageSize { return }
            }
        }
        /// `UPDATE` of the attribute of `count` rows: each row's key and value bound in turn,
        /// then the keys again (two shapes per attribute: full batches, and the last).
        func batchUpdate(_ count: Int) -> String {
            // PostgreSQL gives a CASE of parameters the type text; the cast gives them the column's.
            let value = dialect == .postgres ? "CAST(? AS \(dialect.columnType(attribute.type)))" : "?"
            let cases = String(repeating: " WHEN ? THEN \(value)", count: count)
            let keys = Array(repeating: "?", count: count).joined(separator: ", ")
            return "UPDATE \(table) SET \(column) = CASE \(pk)\(cases) END WHERE \(pk) IN (\(keys))"
        }
        /// Fails for the first row (in key order) whose count `sum` is above `maximum`, as a save
        /// of its object fails.
        func refuseCount(above maximum: Int64, _ sum: String) throws {
            let rows = try connection.valueRows(
                "SELECT \(pk), (\(sum)) FROM \(table) WHERE (\(sum)) > \(maximum) ORDER BY \(pk) LIMIT 1", [],
                types: [.integer64, .integer64])
            guard let row = rows.first else { return }
            guard case .int(let key)? = row[0], case .int(let count)? = row[1] else {
                throw Uncomputable(why: "a row's key or count is no integer")
            }
            throw Unconvertible(key: key, value: .int(count))
        }
        /// Sets every row's value to the value of `expression`, of type `type`: in SQL when the
        /// attribute holds it as is, converted in Swift when a save converts it.
        func set(_ expression: String, of type: AttributeType) throws {
            if Self.fits(type, into: attribute.type) { return try set(expression) }
            guard Self.numbers.contains(type), Self.numbers.contains(attribute.type) else {
                throw Uncomputable(why: "its value is a \(type), and the attribute a \(attribute.type)")
            }
            try setInSwift(expression, type)
        }
        switch derivation {
        case .now:
            let time: AttributeValue = attribute.type == .date ? .date(now) : .double(now.timeIntervalSinceReferenceDate)
            guard let converted = SchemaMapping.convert(time, to: attribute.type) else {
                throw Uncomputable(why: "now() is no \(attribute.type)")
            }
            try connection.run("UPDATE \(table) SET \(column) = ? WHERE \(column) IS NULL", [converted])
        case .keyPath(let path):
            let reached = try value(path.split(separator: ".").map(String.init), of: entity, table)
            try set(reached.sql, of: reached.type)
        case .function(let name, let path):
            let reached = try value(path.split(separator: ".").map(String.init), of: entity, table)
            guard attribute.type == .string else {
                throw Uncomputable(why: "a text function gives text, and the attribute is a \(attribute.type)")
            }
            // A save gives no value for a value that is not text.
            guard reached.type == .string else { return try set("NULL") }
            try setInSwift(reached.sql, .string) { value in
                guard case .string(let text) = value else { return .null }
                return .string(AttributeDerivation.apply(name, to: text))
            }
        case .count(let relationshipName):
            guard let relationship = entity.relationship(named: relationshipName), relationship.isToMany,
                let destination = byName[relationship.destinationEntityName]
            else { throw Uncomputable(why: "'\(entity.name).\(relationshipName)' is no to-many relationship") }
            let counts: [String]
            switch layout.storage[entity.name]?[relationshipName] {
            case .inverseForeignKey(_, let key, _)?:
                counts = entities.filter { $0.isKind(of: destination) }.map {
                    "(SELECT count(*) FROM \(q($0.name)) AS _c WHERE _c.\(q(key)) = \(table).\(pk))"
                }
            case .joinTable(let join, let sourceColumn, _, _)?:
                counts = ["(SELECT count(*) FROM \(q(join)) AS _c WHERE _c.\(q(sourceColumn)) = \(table).\(pk))"]
            default:
                throw Uncomputable(why: "'\(entity.name).\(relationshipName)' is not stored")
            }
            let sum = counts.joined(separator: " + ")
            // A count goes into any integer attribute in SQL, once no row's count is past what the
            // attribute holds (SQLite would store it as is, PostgreSQL fail with a generic error);
            // into another number type, a save converts it.
            if [.integer16, .integer32].contains(attribute.type) {
                try refuseCount(above: attribute.type.integerRange.upperBound, sum)
                try set(sum)
            } else if attribute.type == .integer64 {
                try set(sum)
            } else {
                try set(sum, of: .integer64)
            }
        case .aggregate:
            throw Uncomputable(why: "an aggregate other than @count")
        }
    }
}
