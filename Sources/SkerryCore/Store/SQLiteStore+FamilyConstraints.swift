import Foundation

/// Uniqueness constraints across an entity hierarchy. Core Data keeps a hierarchy in one table,
/// so a constraint an entity declares holds among the objects of all its sub-entities. Skerry
/// keeps each entity in its own table, where a unique index holds the constraint; across the
/// tables of a hierarchy, triggers on each table refuse a row whose values another table of the
/// hierarchy already holds, with SQLite's own words ("UNIQUE constraint failed: Entity.column"),
/// which a save reports as ``SkerryError/Code/constraintViolation``.
extension SQLiteStore {
    /// What the names of these triggers contain (after the table's name).
    static let familyUniqueMarker = "__family_unique__"

    typealias FamilyConstraint = StoreSchema.FamilyConstraint

    static func familyConstraints(_ entities: [EntityDescription]) -> [FamilyConstraint] {
        StoreSchema.familyConstraints(entities)
    }

    /// The triggers that keep `constraint` across its tables: before an insert into, or an update
    /// of the constrained columns of, each member's table.
    static func familyTriggers(_ constraint: FamilyConstraint) -> [(name: String, sql: String)] {
        let q = SQLBuilder.quote
        let message =
            "UNIQUE constraint failed: "
            + constraint.columns.map { "\(constraint.declaring.name).\($0)" }.joined(separator: ", ")
        let raise = "SELECT RAISE(ABORT, '\(message.replacingOccurrences(of: "'", with: "''"))');"
        return constraint.members.flatMap { member -> [(name: String, sql: String)] in
            let condition = constraint.members.filter { $0 !== member }.map { other in
                "EXISTS (SELECT 1 FROM \(q(other.name)) WHERE "
                    + constraint.columns.map { "\(q($0)) = NEW.\(q($0))" }.joined(separator: " AND ") + ")"
            }.joined(separator: " OR ")
            let prefix = member.name + familyUniqueMarker + constraint.name
            return [
                ("\(prefix)_insert", "BEFORE INSERT ON \(q(member.name))"),
                ("\(prefix)_update", "BEFORE UPDATE OF \(constraint.columns.map(q).joined(separator: ", ")) ON \(q(member.name))"),
            ].map { name, event in
                (name, "CREATE TRIGGER \(q(name)) \(event) WHEN \(condition) BEGIN \(raise) END")
            }
        }
    }

    /// Brings the hierarchy-wide uniqueness triggers of the store to those `entities` want:
    /// drops the ones no longer wanted, and creates the missing ones after checking that the
    /// rows already hold their constraint.
    /// - Throws: ``SkerryError/Code/constraintViolation`` naming the entity and columns when
    ///   objects of different tables of a hierarchy share the values of a constraint.
    static func syncFamilyUniqueness(_ entities: [EntityDescription], _ connection: SQLiteConnection) throws {
        let statement = try connection.cachedStatement(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND instr(name, ?) > 0")
        try statement.bind([.string(familyUniqueMarker)])
        var existing: [String: String] = [:]
        while try statement.step() { existing[statement.text(at: 0)] = statement.text(at: 1) }
        statement.reset()
        let wanted = familyConstraints(entities).map { ($0, familyTriggers($0)) }
        let wantedSQL = Dictionary(wanted.flatMap { $0.1.map { ($0.name, $0.sql) } }, uniquingKeysWith: { first, _ in first })
        // A trigger whose SQL differs names other tables (a sub-entity came or went): made again.
        for (name, sql) in existing.sorted(by: { $0.key < $1.key }) where wantedSQL[name] != sql {
            try connection.execute("DROP TRIGGER \(SQLBuilder.quote(name))")
            existing[name] = nil
        }
        for (constraint, triggers) in wanted where !triggers.allSatisfy({ existing[$0.name] != nil }) {
            try checkFamilyDuplicates(constraint, connection)
            for trigger in triggers where existing[trigger.name] == nil { try connection.execute(trigger.sql) }
        }
    }

    /// Drops the hierarchy-wide uniqueness triggers of `table` (a table a migration retires).
    static func dropFamilyTriggers(of table: String, _ connection: SQLiteConnection) throws {
        let statement = try connection.cachedStatement(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND instr(name, ?) > 0")
        try statement.bind([.string(table), .string(familyUniqueMarker)])
        var names: [String] = []
        while try statement.step() { names.append(statement.text(at: 0)) }
        statement.reset()
        for name in names { try connection.execute("DROP TRIGGER \(SQLBuilder.quote(name))") }
    }

    private static func checkFamilyDuplicates(_ constraint: FamilyConstraint, _ connection: SQLiteConnection) throws {
        try StoreSchema.checkFamilyDuplicates(constraint, connection)
    }
}
