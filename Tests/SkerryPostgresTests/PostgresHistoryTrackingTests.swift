import Dispatch
import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// An instance that loaded a PostgreSQL store without `PersistentHistoryTrackingKey` while it
/// recorded no history, racing another instance that turns tracking on. (The sequential case, on
/// SQLite and PostgreSQL, is in `PersistentHistoryTrackingTests`.)
@Suite(.postgres) struct PostgresHistoryTrackingTests {
    /// A save (or a batch delete) of the instance without the option starts while another
    /// instance is turning tracking on (it holds the history lock and wrote `on`, not committed
    /// yet). The write waits for that instance, then reads `on` and fails with `.storeIsReadOnly`,
    /// writing nothing: committing unrecorded after tracking is on would be a write the history's
    /// consumers miss. (The batch delete sends its check, its `DELETE` and its `COMMIT` at once:
    /// the check reads the state in a snapshot taken after the wait, and the server skips the rest.)
    /// The same when the connection string makes SERIALIZABLE the sessions' default isolation,
    /// whose snapshot would be taken before the wait: the store's writes are READ COMMITTED.
    @Test(arguments: [false, true], [false, true])
    func aWriteWithoutTheOptionWhileAnotherInstanceTurnsTrackingOnWaitsForItAndIsRefused(batchDelete: Bool, serializableByDefault: Bool)
        throws
    {
        let schema = PostgresTestServer.newSchema()
        let stack = PersistentStack(name: "Plain", model: PostgresPersistentHistoryTests.model)
        let connectionString =
            serializableByDefault
            ? try PostgresConnectionString.adding(
                option: "-c default_transaction_isolation=serializable", to: try PostgresTestServer.require())
            : try PostgresTestServer.require()
        stack.persistentStoreDescriptions = [.postgres(connectionString, maximumConnections: 2, schema: schema)]
        try stack.loadPersistentStores()
        // The store's own sessions have the default the variant asks for.
        let store = try #require(stack.persistentStoreCoordinator.loadedStores.first as? PostgresStore)
        let isolation = try store.pool.withConnection { try $0.query("SHOW default_transaction_isolation").text(0, 0) }
        #expect((isolation == "serializable") == serializableByDefault, "\(isolation)")
        // One entry saved before, for the batch delete (its statements prepared by a first one).
        try stack.viewContext.performAndWait {
            let entry = try stack.viewContext.insert(entityName: "Entry")
            try entry.setValue(Int32(0), forKey: "writer")
            try entry.setValue(Int32(0), forKey: "index")
            try stack.viewContext.save()
            _ = try stack.viewContext.execute(BatchDeleteRequest(entityName: "Entry", predicate: AttributeKey("writer") == Int64(9)))
        }
        // The other instance, between its lock and its commit.
        let turning = try PostgresHistoryLockHolder.holding(schema)
        try turning.execute(
            "INSERT INTO \"\(schema)\".\"_skerry_metadata\" (\"key\", \"value\") VALUES ('historyTracking', 'on') ON CONFLICT (\"key\") DO UPDATE SET \"value\" = excluded.\"value\""
        )
        let turningPID = try #require(try turning.scalarInt64("SELECT pg_backend_pid()"))
        let watcher = try PostgresTestServer.connect()

        let outcome = Locked<String?>(nil)
        let saved = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { saved.signal() }
            let context = stack.newBackgroundContext()
            do {
                try context.performAndWait {
                    if batchDelete {
                        _ = try context.execute(BatchDeleteRequest(entityName: "Entry"))
                        return
                    }
                    let entry = try context.insert(entityName: "Entry")
                    try entry.setValue(Int32(1), forKey: "writer")
                    try entry.setValue(Int32(1), forKey: "index")
                    try context.save()
                }
                outcome.set("saved")
            } catch {
                outcome.set("\(SkerryError.converting(error).code)")
            }
        }
        var waited = false
        // A guard against hanging, not a measurement: a loaded machine may take seconds to get there.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try watcher.scalarInt64("SELECT pid FROM pg_stat_activity WHERE ?::integer = ANY(pg_blocking_pids(pid))", [.int(turningPID)])
                != nil
            {
                waited = true
                break
            }
            if saved.wait(timeout: .now() + 0.02) == .success {
                saved.signal()
                break
            }
        }
        #expect(waited, "the save did not wait for the instance turning tracking on")
        try turning.execute("COMMIT")
        #expect(saved.wait(timeout: .now() + 60) == .success)
        #expect(outcome.value == "\(SkerryError.Code.storeIsReadOnly)")
        #expect(try watcher.scalarInt64("SELECT count(*) FROM \"\(schema)\".\"Entry\"") == 1)
    }

    /// An opening with the option that turns tracking on waits for the saves under way of
    /// instances without it (here a session holding the history lock shared, as such a save does
    /// until it commits) at most `historyLockTimeout`, then fails to load; once they are done, it
    /// loads.
    @Test func anOpeningThatTurnsTrackingOnWaitsForSavesUnderWayAtMostItsLockTimeout() throws {
        let schema = PostgresTestServer.newSchema()
        let plain = PersistentStack(name: "Plain", model: PostgresPersistentHistoryTests.model)
        plain.persistentStoreDescriptions = [try PostgresTestServer.description(schema: schema)]
        try plain.loadPersistentStores()
        func tracking() throws -> PersistentStack {
            let stack = PersistentStack(name: "Tracking", model: PostgresPersistentHistoryTests.model)
            var description = StoreDescription.postgres(
                PostgresStoreOptions(
                    connectionString: try PostgresTestServer.require(), maximumConnections: 2, schema: schema,
                    historyLockTimeout: .milliseconds(200)))
            description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
            stack.persistentStoreDescriptions = [description]
            try stack.loadPersistentStores()
            return stack
        }
        // A save under way of an instance without the option.
        let saving = PostgresHistoryLockHolder(schema, shared: true)
        #expect(saving.failure.value == nil)
        let error = expectError(.storeLoadFailed) { _ = try tracking() }
        #expect(error?.postgres?.sqlState == .lockNotAvailable)
        saving.release()
        _ = try tracking()
        try plain.viewContext.performAndWait { () throws in
            let entry = try plain.viewContext.insert(entityName: "Entry")
            try entry.setValue(Int32(1), forKey: "writer")
            try entry.setValue(Int32(1), forKey: "index")
            expectError(.storeIsReadOnly) { try plain.viewContext.save() }
        }
    }
}
