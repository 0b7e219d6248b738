import Foundation
import SkerryCore

extension PostgresStore {
    /// The privileges granted on a store's tables and sequences, read before a load changes the
    /// schema, and given to the tables and sequences the change makes, in the same transaction:
    /// roles other than the owner (a service's instances connecting as an application role a
    /// DBA granted the store's tables and sequences) keep their access to what a migration adds
    /// or rebuilds.
    ///
    /// A table or sequence made again under a name the store had (a join table a migration
    /// rebuilds) gets the grants it had. A new one gets what every one of its kind had in common:
    /// a new entity's or join table's table the grants common to all the store's entity and join
    /// tables, a new hierarchy's key sequence those common to all its key sequences; a new table
    /// or sequence of the store's own (`_skerry_…`, such as history's) gets the same. A grant
    /// only some of them had (a reporting role allowed to read one table) is not extended. What a
    /// table or sequence that stays keeps is left alone, as are the owner's own rights, column
    /// privileges and default privileges (`ALTER DEFAULT PRIVILEGES`, which the server applies on
    /// its own).
    struct Privileges {
        /// One privilege of one role (`PUBLIC` or the role's quoted name).
        struct Grant: Hashable {
            let grantee: String
            let privilege: String
        }

        /// A table or sequence of the store.
        private struct Relation {
            let oid: String
            let name: String
            /// `r` (table) or `S` (sequence).
            let kind: String
            /// Each grant, with whether the role may grant it on.
            var grants: [Grant: Bool]
        }

        /// The tables and sequences there were, by OID.
        private let known: Set<String>
        /// Their grants, by kind and name.
        private let byName: [String: [Grant: Bool]]
        /// What every entity or join table, or every key sequence, had in common, by kind.
        private let common: [String: [Grant: Bool]]

        /// Reads the grants of the store's tables and sequences in the current schema: the
        /// tables named `tables` (entity and join tables) and those whose names start with
        /// `_skerry_`.
        init(_ connection: PostgresConnection, tables: [String]) throws {
            let relations = try Self.read(connection, tables: tables)
            known = Set(relations.map(\.oid))
            byName = Dictionary(relations.map { ($0.kind + $0.name, $0.grants) }, uniquingKeysWith: { first, _ in first })
            var common: [String: [Grant: Bool]] = [:]
            for relation in relations where relation.kind == "S" ? relation.name.hasPrefix(sequencePrefix) : !Self.isOwn(relation.name) {
                guard let shared = common[relation.kind] else {
                    common[relation.kind] = relation.grants
                    continue
                }
                var both: [Grant: Bool] = [:]
                for (grant, option) in shared {
                    if let other = relation.grants[grant] { both[grant] = option && other }
                }
                common[relation.kind] = both
            }
            self.common = common
        }

        /// Grants the tables and sequences made since ``init(_:tables:)`` (with `tables` the
        /// entity and join tables now) what they get (see ``Privileges``), in one round trip.
        func extend(_ connection: PostgresConnection, tables: [String]) throws {
            var statements: [String] = []
            for relation in try Self.read(connection, tables: tables) where !known.contains(relation.oid) {
                let grants = byName[relation.kind + relation.name] ?? common[relation.kind] ?? [:]
                let object = (relation.kind == "S" ? "SEQUENCE " : "TABLE ") + SQLBuilder.quote(relation.name)
                // One statement per role and grant option, its privileges in a stable order.
                let byRole = Dictionary(grouping: grants, by: { "\($0.key.grantee)\u{1F}\($0.value)" })
                for (_, entries) in byRole.sorted(by: { $0.key < $1.key }) {
                    let privileges = entries.map(\.key.privilege).sorted().joined(separator: ", ")
                    let option = entries[0].value ? " WITH GRANT OPTION" : ""
                    statements.append("GRANT \(privileges) ON \(object) TO \(entries[0].key.grantee)\(option)")
                }
            }
            guard !statements.isEmpty else { return }
            try connection.execute(statements.joined(separator: "; "))
        }

        /// Whether `name` is one of the store's own tables or sequences.
        private static func isOwn(_ name: String) -> Bool { name.hasPrefix("_skerry_") }

        /// The store's tables and sequences in the current schema, with their grants (but the
        /// owner's own).
        private static func read(_ connection: PostgresConnection, tables: [String]) throws -> [Relation] {
            let names = String(decoding: try JSONEncoder().encode(tables.map(StoreIndexes.storedName)), as: UTF8.self)
            let result = try connection.query(
                """
                SELECT c.oid::text, c.relname::text, c.relkind::text, a.privilege_type, \
                CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, a.is_grantable \
                FROM pg_class c LEFT JOIN LATERAL aclexplode(c.relacl) a ON a.grantee <> c.relowner \
                WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) \
                AND c.relkind IN ('r', 'S') \
                AND (c.relname::text IN (SELECT json_array_elements_text(?::json)) OR starts_with(c.relname::text, '_skerry_')) \
                ORDER BY c.oid
                """, [.string(names)])
            var relations: [Relation] = []
            for row in 0..<result.rowCount {
                let oid = result.text(row, 0)
                if relations.last?.oid != oid {
                    relations.append(Relation(oid: oid, name: result.text(row, 1), kind: result.text(row, 2), grants: [:]))
                }
                guard !result.isNull(row, 3) else { continue }
                let grant = Grant(grantee: result.text(row, 4), privilege: result.text(row, 3))
                relations[relations.count - 1].grants[grant] = result.value(row, 5, as: .boolean) == .bool(true)
            }
            return relations
        }
    }
}
