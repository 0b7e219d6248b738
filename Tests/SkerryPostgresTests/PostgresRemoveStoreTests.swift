import Foundation
import Testing

@testable import SkerryCore
@testable import SkerryPostgres

/// `StoreCoordinator.remove(_:)` on a PostgreSQL store closes its connections at once, the change
/// listener's included, while the stack lives on: counted in the server's `pg_stat_activity` by
/// an application name of the test's own.
@Suite(.postgres) struct PostgresRemoveStoreTests {
    static func model() throws -> ObjectModel {
        try ObjectModel(entities: [EntityDescription(name: "Note", attributes: [AttributeDescription("text", .string)])])
    }

    /// The server's backends whose client gave `marker` as its application name.
    static func backends(_ watcher: PostgresConnection, _ marker: String) throws -> Int64 {
        try watcher.scalarInt64("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?", [.string(marker)]) ?? 0
    }

    /// A backend leaves `pg_stat_activity` once its process has ended, a moment after its client
    /// closed the connection: waits (at most 30 s) for the last one of `marker` to go.
    static func waitForNoBackends(_ watcher: PostgresConnection, _ marker: String) throws -> Int64 {
        var count = try backends(watcher, marker)
        for _ in 0..<600 where count > 0 {
            Thread.sleep(forTimeInterval: 0.05)
            count = try backends(watcher, marker)
        }
        return count
    }

    /// A loaded stack whose connections carry `marker` as their application name, with a note saved.
    static func stack(_ marker: String, propagatesChanges: Bool) throws -> PersistentStack {
        let stack = PersistentStack(name: "Notes", model: try model())
        stack.persistentStoreDescriptions = [
            .postgres(
                try PostgresTestServer.require() + " application_name=\(marker)", maximumConnections: 3,
                schema: PostgresTestServer.newSchema(), propagatesChanges: propagatesChanges)
        ]
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let note = try context.insert(entityName: "Note")
            try note.setValue("kept", forKey: "text")
            try context.save()
        }
        return stack
    }

    @Test(arguments: [false, true]) func removeClosesTheStoresConnections(propagatesChanges: Bool) throws {
        let marker = "skerry_remove_" + UUID().uuidString.prefix(8).lowercased()
        let watcher = try PostgresTestServer.connect()
        let stack = try Self.stack(marker, propagatesChanges: propagatesChanges)
        let coordinator = stack.persistentStoreCoordinator
        // The pool's connection, and the listener's when changes propagate.
        #expect(try Self.backends(watcher, marker) >= (propagatesChanges ? 2 : 1))

        // Held as work in progress (or anything else) would hold it: its connections close all the same.
        let store = try #require(coordinator.loadedStores.first)
        try coordinator.remove(coordinator.persistentStores[0])
        let remaining = try Self.waitForNoBackends(watcher, marker)
        withExtendedLifetime(store) {}
        #expect(remaining == 0)

        // The stack lives on; its contexts get a typed error, and no connection is opened again.
        let context = stack.newBackgroundContext()
        context.performAndWait { _ = expectError(.noStore) { _ = try context.count(for: FetchRequest(entityName: "Note")) } }
        #expect(try Self.backends(watcher, marker) == 0)
        #expect(!stack.hasLoadedStores)

        // Loaded again, the store has what was saved.
        try stack.loadPersistentStores()
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Note")) } == 1)
        #expect(try Self.backends(watcher, marker) >= 1)
    }

    /// A PostgreSQL store has no file: `destroyPersistentStore` refuses its type and leaves it loaded.
    @Test func destroyRefusesAPostgresStore() throws {
        let marker = "skerry_destroy_" + UUID().uuidString.prefix(8).lowercased()
        let stack = try Self.stack(marker, propagatesChanges: false)
        let coordinator = stack.persistentStoreCoordinator
        let store = coordinator.persistentStores[0]
        #expect(store.url == nil)
        expectError(.invalidArgument) {
            try coordinator.destroyPersistentStore(at: URL(fileURLWithPath: "/tmp/none"), ofType: store.type)
        }
        #expect(coordinator.persistentStores == [store])
    }
}
