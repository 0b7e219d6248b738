import Dispatch
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// Entity inheritance on PostgreSQL, laid out as in the SQLite store: a table per entity, keys
/// unique in a hierarchy from one sequence, and a uniqueness constraint of a parent that holds
/// across its sub-entities' tables even when two processes write at once. (Fetches, relationships,
/// counts and batch deletes across a hierarchy run on every kind of store in InheritanceTests
/// and HierarchyConstraintTests.)
@Suite(.postgres) struct PostgresInheritanceTests: ItemHierarchyFixture {
    static func stack(_ schema: String, ebooks: Bool = false) throws -> PersistentStack {
        try PostgresTestServer.stack(model(ebooks: ebooks), schema, name: "Items", maximumConnections: 4)
    }

    @Test func aHierarchyHasATablePerEntityAndOneKeySequence() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema)
        let context = stack.newBackgroundContext()
        let keys = try context.performAndWait {
            let objects = try [("Book", "B1"), ("Film", "F1"), ("Book", "B2"), ("Film", "F2")].map {
                try Self.insert($0.0, $0.1, in: context)
            }
            try context.save()
            let reserved = try context.insert(entityName: "Film")
            try context.obtainPermanentIDs(for: [reserved])
            return objects.map(\.objectID.key) + [reserved.objectID.key]
        }
        // Keys come from the hierarchy's one sequence: no two objects of it share a key.
        #expect(Set(keys).count == keys.count)
        let server = try PostgresTestServer.connect()
        let tables = try server.textRows(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_name NOT LIKE '\\_%' ORDER BY 1",
            [.string(schema)])
        #expect(tables.map { $0[0] } == ["Book", "Film", "Item"])
        let sequences = try server.textRows(
            "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = ? AND sequence_name LIKE '\\_skerry\\_seq\\_%' ORDER BY 1",
            [.string(schema)])
        #expect(sequences.map { $0[0] } == ["_skerry_seq_Item"])
        #expect(try Self.codes("Item", in: stack) == ["B1", "B2", "F1", "F2"])

        // A batch delete of the parent takes its sub-entities' rows, table by table.
        try context.performAndWait {
            let result = try context.execute(BatchDeleteRequest(entityName: "Item", predicate: AttributeKey("code") >= "B2"))
            #expect(Set(result.deletedObjectIDs.map(\.entityName)) == ["Book", "Film"])
            #expect(result.count == 3)
        }
        #expect(try Self.codes("Item", in: stack) == ["B1"])
    }

    /// Two saves write the same code into sibling tables at once. Each table's unique index
    /// cannot see the other table, and a plain check of the other table cannot see rows not
    /// committed yet; the hierarchy's trigger locks the code first, so the second save waits
    /// for the first, then sees its row and fails with the typed uniqueness error.
    @Test func siblingsSavingTheSameValueAtOnceKeepOne() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema)
        let holder = try PostgresTestServer.connect()
        let holderPID = try #require(try holder.scalarInt64("SELECT pg_backend_pid()"))
        try holder.execute("BEGIN")
        try holder.query(
            "INSERT INTO \"\(schema)\".\"Book\" (_pk, code) VALUES (nextval('\"\(schema)\".\"_skerry_seq_Item\"'), ?)", [.string("X")])

        let outcome = Locked<SkerryError??>(nil)
        let done = DispatchGroup()
        let context = stack.newBackgroundContext()
        DispatchQueue.global().async(group: done) {
            let failure: SkerryError? = context.performAndWait {
                do {
                    _ = try Self.insert("Film", "X", in: context)
                    try context.save()
                    return nil
                } catch {
                    return error as? SkerryError ?? SkerryError(.database, "\(error)")
                }
            }
            outcome.update { $0 = .some(failure) }
        }
        try PostgresConcurrentSaveTests.waitUntil(
            try PostgresTestServer.connect(),
            "SELECT count(*) FROM pg_stat_activity WHERE ?::integer = ANY(pg_blocking_pids(pid))", [.int(holderPID)])
        try holder.execute("COMMIT")
        done.wait()

        let failure = try #require(outcome.value, "the save did not finish")
        let error = try #require(failure, "the second save committed a duplicate code")
        #expect(error.code == .constraintViolation, "\(error)")
        #expect(error.key == "code")
        #expect(error.message.contains("Item.code"))
        #expect(try Self.codes("Item", in: stack) == ["X"])
        #expect(try Self.codes("Film", in: stack) == [])
    }

    /// A fetch of a parent entity with a raw SQL condition reads the family's matching IDs, then
    /// each entity's rows by key: both statements see one snapshot. Another session deletes a
    /// matching film and commits between them (the condition waits for an advisory lock the
    /// test holds, after the first statement began): the fetch still returns the film, as the
    /// store was when the fetch began, not a list the deleted row went missing from.
    @Test func aFamilyFetchWithARawConditionReadsOneSnapshot() throws {
        let schema = PostgresTestServer.newSchema()
        let stack = try Self.stack(schema)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for (entity, code) in [("Book", "B1"), ("Film", "F1")] { try Self.insert(entity, code, in: context) }
            try context.save()
        }
        let holder = try PostgresTestServer.connect()
        let lock = Int64.random(in: 1_000_000...2_000_000_000) // classid 0, objid this
        try holder.query("SELECT pg_advisory_lock(?::bigint)", [.int(lock)])
        let fetched = Locked<Result<[String], SkerryError>?>(nil)
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            let reader = stack.newBackgroundContext()
            let request = FetchRequest(
                entityName: "Item",
                predicate: .sql("pg_advisory_xact_lock_shared(CAST(? AS bigint))::text = '' AND code IS NOT NULL", [.int(lock)]),
                sortKeys: [SortKey("code")])
            let codes = reader.performAndWait { () -> Result<[String], SkerryError> in
                do {
                    return .success(try reader.fetch(request).compactMap { try $0.value(forKey: "code", as: String?.self) })
                } catch {
                    return .failure(error as? SkerryError ?? SkerryError(.database, "\(error)"))
                }
            }
            fetched.update { $0 = codes }
        }
        try PostgresConcurrentSaveTests.waitUntil(
            try PostgresTestServer.connect(),
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = 0 AND objid::text = ?",
            [.string(String(lock))])
        try holder.execute("DELETE FROM \"\(schema)\".\"Film\" WHERE code = 'F1'")
        try holder.query("SELECT pg_advisory_unlock(?::bigint)", [.int(lock)])
        done.wait()

        let result = try #require(fetched.value, "the fetch did not finish")
        #expect(try result.get() == ["B1", "F1"])
        #expect(try Self.codes("Item", in: stack) == ["B1"])
    }
}
