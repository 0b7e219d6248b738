import SkerryCore

/// Uniqueness constraints across an entity hierarchy (``SkerryCore/StoreSchema/FamilyConstraint``)
/// on PostgreSQL: a trigger on each table of the hierarchy refuses a row whose values another
/// table of the hierarchy already holds, with the server's own unique-violation code (23505),
/// which a save reports as ``SkerryCore/SkerryError/Code/constraintViolation``.
///
/// The functions keep the search path they were made with (the store's schema), so that a row
/// written by any session, whatever its search path, is checked against the hierarchy's tables.
///
/// Unlike a unique index, a check of other tables does not see rows that concurrent
/// transactions have not committed yet: each trigger first takes a transaction-scoped advisory
/// lock on the constraint and the values, so that two saves writing the same values into two
/// tables of a hierarchy run their checks one after the other, and the second sees the first's row.
extension PostgresStore {
    /// What the names of these triggers and their functions start with.
    static let familyUniquePrefix = "_skerry_family_unique_"

    /// The trigger (and function) that keeps `constraint` on `member`'s table, named after
    /// everything its SQL depends on, so that a changed hierarchy or constraint gets a new one.
    static func familyTrigger(_ constraint: StoreSchema.FamilyConstraint, on member: EntityDescription) -> (name: String, sql: String) {
        let q = SQLBuilder.quote
        let others = constraint.members.filter { $0 !== member }
        let name =
            familyUniquePrefix
            + ObjectModel.fnv1a64Hex(
                ([member.name, constraint.name] + constraint.columns + others.map(\.name)).joined(separator: "\u{1F}"))
        func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
        let present = constraint.columns.map { "NEW.\(q($0)) IS NOT NULL" }.joined(separator: " AND ")
        let lockKey =
            literal(constraint.name)
            + constraint.columns.map { " || chr(31) || NEW.\(q($0))::text" }.joined()
        let clash = others.map { other in
            "EXISTS (SELECT 1 FROM \(q(other.name)) WHERE "
                + constraint.columns.map { "\(q($0)) = NEW.\(q($0))" }.joined(separator: " AND ") + ")"
        }.joined(separator: " OR ")
        // The unique index of the member's own table names the constraint, as the server does.
        let index = StoreIndexes.indexName(member.name, constraint.columns, unique: true)
        let message =
            "duplicate key value violates unique constraint \"\(index)\": "
            + constraint.columns.map { "\(constraint.declaring.name).\($0)" }.joined(separator: ", ")
            + " is unique across the sub-entities of \(constraint.declaring.name)"
        let columnList = constraint.columns.map(q).joined(separator: ", ")
        let sql = """
            CREATE OR REPLACE FUNCTION \(q(name))() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $skerry$
            BEGIN
              IF \(present) THEN
                PERFORM pg_advisory_xact_lock(hashtextextended(\(lockKey), 0));
                IF \(clash) THEN
                  RAISE EXCEPTION USING ERRCODE = 'unique_violation', MESSAGE = \(literal(message)), CONSTRAINT = \(literal(index)), TABLE = \(literal(member.name));
                END IF;
              END IF;
              RETURN NEW;
            END
            $skerry$;
            CREATE TRIGGER \(q(name)) BEFORE INSERT OR UPDATE OF \(columnList) ON \(q(member.name)) FOR EACH ROW EXECUTE FUNCTION \(q(name))();
            """
        return (name, sql)
    }

    /// Brings the hierarchy-wide uniqueness triggers of the store's schema to those `entities`
    /// want: drops the ones no longer wanted (with their functions), and creates the missing ones
    /// after checking that the rows already hold their constraint.
    /// - Throws: ``SkerryCore/SkerryError/Code/constraintViolation`` naming the entity and columns
    ///   when objects of different tables of a hierarchy share the values of a constraint.
    static func syncFamilyUniqueness(_ entities: [EntityDescription], _ connection: PostgresConnection) throws {
        let wanted = StoreSchema.familyConstraints(entities).map { constraint in
            (constraint, constraint.members.map { familyTrigger(constraint, on: $0) })
        }
        let existing = try connection.textRows(
            """
            SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
            WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND starts_with(t.tgname, ?)
            """, [.string(familyUniquePrefix)])
        let wantedNames = Set(wanted.flatMap { $0.1.map(\.name) })
        let q = SQLBuilder.quote
        for row in existing where !wantedNames.contains(row[0]) {
            try connection.execute("DROP TRIGGER \(q(row[0])) ON \(q(row[1])); DROP FUNCTION IF EXISTS \(q(row[0]))()")
        }
        let present = Set(existing.map { $0[0] })
        for (constraint, triggers) in wanted where !triggers.allSatisfy({ present.contains($0.name) }) {
            try StoreSchema.checkFamilyDuplicates(constraint, connection)
            for trigger in triggers where !present.contains(trigger.name) { try connection.execute(trigger.sql) }
        }
    }
}
