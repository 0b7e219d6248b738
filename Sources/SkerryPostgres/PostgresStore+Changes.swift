import Foundation
import SkerryCore

/// What one save changed, as recorded in the change table for other processes: keys by entity.
struct PostgresChangeRecord: Codable, Equatable {
    var inserted: [String: [Int64]] = [:]
    var updated: [String: [Int64]] = [:]
    var deleted: [String: [Int64]] = [:]

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// The record of a write: inserts under their allocated keys, updates and deletes.
    init(_ changes: StoreWrite, insertedKeys: [Int64]) {
        for (insert, key) in zip(changes.inserts, insertedKeys) { inserted[insert.objectID.entityName, default: []].append(key) }
        for update in changes.updates { updated[update.objectID.entityName, default: []].append(update.objectID.key) }
        for delete in changes.deletes { deleted[delete.objectID.entityName, default: []].append(delete.objectID.key) }
    }

    /// An empty record (a batch delete's, filled as its statements answer).
    init() {}

    /// The IDs of the changed objects in the store `identity`; entities this store does not hold
    /// (written by a process with another model) are left out.
    func storeChanges(_ identity: StoreIdentity, _ entities: [String: EntityDescription]) -> StoreChanges {
        func ids(_ keys: [String: [Int64]]) -> Set<ObjectID> {
            var ids = Set<ObjectID>()
            for (name, keys) in keys {
                guard let entity = entities[name] else { continue }
                for key in keys { ids.insert(ObjectID(store: identity, entity: entity, primaryKey: key)) }
            }
            return ids
        }
        return StoreChanges(inserted: ids(inserted), updated: ids(updated), deleted: ids(deleted))
    }
}

extension PostgresStore {
    static let changesTable = "_skerry_changes"

    /// The change table: one row per save of a store with change propagation, with the
    /// transaction that wrote it (`pg_current_xact_id()`, 64 bits, never reused), so that a
    /// listener can tell which saves may still commit (see ``PostgresChangeListener``).
    static func createChangesTable(_ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        // Made only when missing: `CREATE … IF NOT EXISTS` needs the right to create in the schema.
        if try !missingRelations([changesTable, changesTable + "__transaction", prunedTable], connection).isEmpty {
            try createMissingChangesTables(connection)
        }
        try connection.execute("INSERT INTO \(q(prunedTable)) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM \(q(prunedTable)))")
    }

    private static func createMissingChangesTables(_ connection: PostgresConnection) throws {
        let q = SQLBuilder.quote
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(q(changesTable)) ("id" bigserial PRIMARY KEY, \
            "transaction" bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint), \
            "savedAt" timestamptz NOT NULL DEFAULT now(), "origin" text NOT NULL, "changes" text NOT NULL)
            """)
        try connection.execute("CREATE INDEX IF NOT EXISTS \(q(changesTable + "__transaction")) ON \(q(changesTable)) (\"transaction\")")
        try connection.execute("CREATE TABLE IF NOT EXISTS \(q(prunedTable)) (\"transaction\" bigint NOT NULL)")
    }

    /// One row: the highest transaction of the changes deleted for age so far, so that a listener
    /// can tell whether changes it had not read yet were deleted (see ``PostgresChangeListener``).
    static let prunedTable = "_skerry_changes_pruned"

    /// The channel a store's saves are announced on: one per store (its identifier), so that
    /// stores in other schemas of the same database are not woken.
    static func changesChannel(_ storeIdentifier: String) -> String {
        "skerry_" + storeIdentifier.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// The statement that records a save and announces it (`NOTIFY`, sent by the server when the
    /// transaction commits, and never when it rolls back); bindings: origin, changes, channel.
    static let recordChangesSQL = """
        WITH c AS (INSERT INTO \(SQLBuilder.quote(changesTable)) ("origin", "changes") VALUES (?, ?) RETURNING "id") \
        SELECT pg_notify(?, c."id"::text) FROM c
        """

    /// The bindings of ``recordChangesSQL`` for `record`, or nil when nothing is to be recorded.
    func changeBindings(_ record: PostgresChangeRecord) -> [AttributeValue]? {
        guard options.propagatesChanges, !record.isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding dictionaries of strings and integers cannot fail.
        let json = String(decoding: (try? encoder.encode(record)) ?? Data("{}".utf8), as: UTF8.self)
        return [.string(origin), .string(json), .string(Self.changesChannel(identity.identifier))]
    }

    func deliverSavesOfOthers(to deliver: @escaping @Sendable (SavesOfOthers) -> Void) {
        listener?.start(deliver)
    }
}
