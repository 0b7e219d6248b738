import Foundation
import SkerryCore

extension PostgresStore {
    /// The keys of a migration step. Keys are unique in a hierarchy and come from one sequence
    /// per hierarchy, named after its root (``sequenceName(_:)``). A step that puts entities of
    /// different old hierarchies (whose keys were counted apart) into one hierarchy renumbers the
    /// rows whose keys clash, as the SQLite store's migration does: the rows of the entity that
    /// comes later in the model whose key a row of an earlier one has get new keys, past every
    /// key of the hierarchy and every key the old sequences handed out; every other row keeps its
    /// key. At the end of the step each sequence of the new version continues past every key.
    struct MigrationKeys {
        let step: MigrationStepSpec
        /// The next key of each old hierarchy's sequence, by the name of the root it is named after.
        let next: [String: Int64]
        /// The root of each old entity's hierarchy, by name.
        private let oldRoots: [String: String]

        /// Reads the old sequences.
        init(_ step: MigrationStepSpec, _ connection: PostgresConnection) throws {
            self.step = step
            // `last_value` is NULL until the sequence gave a key; at most ahead of the last key
            // given (cached values), which only skips keys.
            let result = try connection.query(
                "SELECT sequencename::text, coalesce(last_value + 1, start_value) FROM pg_sequences WHERE schemaname = current_schema() AND starts_with(sequencename::text, ?)",
                [.string(sequencePrefix)])
            var bySequence: [String: Int64] = [:]
            for row in 0..<result.rowCount { bySequence[result.text(row, 0)] = result.int64(row, 1) }
            // By root: a sequence's name may end with a hash instead of the root's whole name.
            var next: [String: Int64] = [:]
            for entity in step.source.entities { next[entity.name] = bySequence[sequenceName(entity.name)] }
            for entity in step.destination { next[entity.name] = next[entity.name] ?? bySequence[sequenceName(entity.name)] }
            self.next = next
            let parents = Dictionary(step.source.entities.map { ($0.name, $0.parent) }, uniquingKeysWith: { first, _ in first })
            var roots: [String: String] = [:]
            for entity in step.source.entities {
                var root = entity.name, seen: Set<String> = [root]
                while let parent = parents[root] ?? nil, parents[parent] != nil, seen.insert(parent).inserted { root = parent }
                roots[entity.name] = root
            }
            oldRoots = roots
        }

        /// The next key the sequence of old entity `name`'s hierarchy would have given.
        func oldNext(_ name: String) -> Int64 { next[oldRoots[name] ?? name] ?? 1 }

        /// Gives new keys to the rows that would share a key with another row of their new
        /// hierarchy, in the old tables, together with every foreign key and join-table row that
        /// holds them (so that the links read afterwards follow them). Returns old entity ->
        /// old key -> new key.
        func renumberClashingKeys(
            _ mapping: SchemaMapping, layout: RelationshipLayout, _ connection: PostgresConnection
        ) throws -> [String: [Int64: Int64]] {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            var hierarchies: [(root: String, members: [String])] = []
            for entityMapping in mapping.entities {
                let root = StoreWritePlanner.keyRoot(entityMapping.destination, among: step.destination).name
                if let position = hierarchies.firstIndex(where: { $0.root == root }) {
                    hierarchies[position].members.append(entityMapping.source.name)
                } else {
                    hierarchies.append((root, [entityMapping.source.name]))
                }
            }
            var renumbered: [String: [Int64: Int64]] = [:]
            // Keys of one old hierarchy never clash: only hierarchies made of several are read.
            for (_, members) in hierarchies where Set(members.map { oldRoots[$0] ?? $0 }).count > 1 {
                var claimed = Set<Int64>(), clashes: [(entity: String, key: Int64)] = [], carried: Int64 = 1
                for member in members {
                    carried = max(carried, oldNext(member))
                    let result = try connection.query("SELECT \(pk) FROM \(q(member)) ORDER BY \(pk)")
                    for row in 0..<result.rowCount where !claimed.insert(result.int64(row, 0)).inserted {
                        clashes.append((member, result.int64(row, 0)))
                    }
                }
                var fresh = max(carried, (claimed.max() ?? 0) + 1)
                for (entity, key) in clashes {
                    renumbered[entity, default: [:]][key] = fresh
                    fresh += 1
                }
            }
            for (entity, keys) in renumbered.sorted(by: { $0.key < $1.key }) {
                try renumber(entity, keys, layout: layout, connection)
            }
            return renumbered
        }

        /// Changes the keys of old entity `entity`'s rows, and the keys of them that foreign keys
        /// and join tables hold (those of relationships whose destination's hierarchy has the
        /// entity: an old key names one row of its old hierarchy).
        private func renumber(
            _ entity: String, _ keys: [Int64: Int64], layout: RelationshipLayout, _ connection: PostgresConnection
        ) throws {
            let q = SQLBuilder.quote
            let old = keys.keys.sorted()
            let bindings = [SQLDialect.postgres.keyList(old), SQLDialect.postgres.keyList(old.map { keys[$0]! })]
            var columns: [(table: String, column: String)] = [(entity, SQLBuilder.primaryKeyColumn)]
            for holder in step.source.entities {
                for relationship in holder.relationships {
                    let storage = layout.storage[holder.name]?[relationship.name]
                    if holder.name == entity, case .joinTable(let table, let sourceColumn, _, _)? = storage {
                        columns.append((table, sourceColumn))
                    }
                    guard layout.entityAndSubentities(relationship.destination).contains(entity) else { continue }
                    switch storage {
                    case .foreignKey(let column)?: columns.append((holder.name, column))
                    case .joinTable(let table, _, let targetColumn, _)?: columns.append((table, targetColumn))
                    default: break
                    }
                }
            }
            var done = Set<String>()
            for (table, column) in columns where done.insert("\(table)\u{1F}\(column)").inserted {
                try connection.query(
                    "UPDATE \(q(table)) SET \(q(column)) = m.new FROM unnest(?::bigint[], ?::bigint[]) AS m(old, new) WHERE \(q(table)).\(q(column)) = m.old",
                    bindings)
            }
        }

        /// Restarts the sequence of each hierarchy of the new version past every key its rows
        /// have and every key the old sequences of its entities' hierarchies gave (creating the
        /// sequences of new hierarchies), and drops the sequences of hierarchies the new version
        /// no longer has. `ALTER SEQUENCE … RESTART WITH` rather than `setval` (which PostgreSQL
        /// never rolls back): a failed migration leaves every sequence where it was, and the keys
        /// a step's `finish` takes go with it; a sequence that stays keeps its owner and grants.
        func carry(_ mapping: SchemaMapping, _ connection: PostgresConnection) throws {
            let q = SQLBuilder.quote, pk = q(SQLBuilder.primaryKeyColumn)
            var wanted: [String: Int64] = [:]
            for entity in step.destination {
                let root = StoreWritePlanner.keyRoot(entity, among: step.destination).name
                var value = max(wanted[root] ?? 1, next[root] ?? 1)
                if let source = mapping.mapping(ofDestination: entity.name)?.source.name { value = max(value, oldNext(source)) }
                value = max(value, try count(connection, "SELECT max(\(pk)) FROM \(q(entity.name))") + 1)
                wanted[root] = value
            }
            let existing = try connection.textRows(
                "SELECT sequencename::text FROM pg_sequences WHERE schemaname = current_schema() AND starts_with(sequencename::text, ?)",
                [.string(sequencePrefix)])
            let kept = Set(wanted.keys.map(sequenceName))
            for row in existing where !kept.contains(row[0]) { try connection.execute("DROP SEQUENCE \(q(row[0]))") }
            let present = Set(existing.map { $0[0] })
            for (root, value) in wanted.sorted(by: { $0.key < $1.key }) {
                let sequence = sequenceName(root)
                try connection.execute(
                    present.contains(sequence)
                        ? "ALTER SEQUENCE \(q(sequence)) RESTART WITH \(value)" : "CREATE SEQUENCE \(q(sequence)) START WITH \(value)")
            }
        }
    }
}
