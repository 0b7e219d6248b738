import Foundation

/// Computes one derived attribute for every row of a store's table, in SQL, writing only the rows
/// whose value changes (a migration that computes an unchanged value again rewrites no row).
struct DerivedFiller {
    /// A derivation the filler cannot compute in SQL, and why.
    struct Uncomputable: Error {
        let why: String
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

    /// Computes `attribute` (derived by `derivation`) of `entity` for every row.
    /// - Throws: ``Uncomputable`` for a derivation the filler cannot compute in SQL; the
    ///   connection's errors.
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
        switch derivation {
        case .now:
            let time: AttributeValue = attribute.type == .date ? .date(now) : .double(now.timeIntervalSinceReferenceDate)
            guard let converted = SchemaMapping.convert(time, to: attribute.type) else {
                throw Uncomputable(why: "now() is no \(attribute.type)")
            }
            try connection.run("UPDATE \(table) SET \(column) = ? WHERE \(column) IS NULL", [converted])
        case .keyPath(let path):
            let reached = try value(path.split(separator: ".").map(String.init), of: entity, table)
            guard Self.fits(reached.type, into: attribute.type) else {
                throw Uncomputable(why: "its value is a \(reached.type), and the attribute a \(attribute.type)")
            }
            try set(reached.sql)
        case .function(let name, let path):
            let reached = try value(path.split(separator: ".").map(String.init), of: entity, table)
            guard reached.type == .string, attribute.type == .string else { throw Uncomputable(why: "it is a text function") }
            let rows = try connection.textRows(
                """
                SELECT CAST(\(pk) AS TEXT), CASE WHEN \(reached.sql) IS NULL THEN '' ELSE 'v' END, \(reached.sql), \
                CASE WHEN \(column) IS NULL THEN '' ELSE 'v' END, \(column) FROM \(table)
                """, [])
            for row in rows {
                guard let key = Int64(row[0]) else { continue }
                let computed = row[1].isEmpty ? AttributeValue.null : .string(AttributeDerivation.apply(name, to: row[2]))
                let stored = row[3].isEmpty ? AttributeValue.null : .string(row[4])
                guard computed != stored else { continue }
                try connection.run("UPDATE \(table) SET \(column) = ? WHERE \(pk) = ?", [computed, .int(key)])
            }
        case .count(let relationshipName):
            guard [.integer16, .integer32, .integer64].contains(attribute.type) else {
                throw Uncomputable(why: "a count is an integer, and the attribute a \(attribute.type)")
            }
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
            try set(counts.joined(separator: " + "))
        case .aggregate:
            throw Uncomputable(why: "an aggregate other than @count")
        }
    }
}
