import Foundation
import Testing

@testable import SkerryCore

/// `destroyPersistentStore` takes the SQLite store from every stack of the process that has the
/// file loaded, not only from the coordinator it was called on: none goes on with a deleted database.
@Suite struct DestroyAcrossStacksTests {
    static func count(_ stack: PersistentStack) throws -> Int {
        let context = stack.newBackgroundContext()
        return try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) }
    }

    static func saveBook(_ title: String, _ stack: PersistentStack) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try context.insertBook(title)
            try context.save()
        }
    }

    static func stack(_ url: URL) throws -> PersistentStack {
        let stack = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        stack.persistentStoreDescriptions[0].url = url
        try stack.loadPersistentStores()
        return stack
    }

    @Test func anotherStackOnTheFileLosesTheStoreAndLoadsTheNewOne() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let first = try Self.stack(url)
        let second = try Self.stack(url)
        let elsewhere = try Self.stack(directory.file("Other.sqlite"))
        let memory = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        memory.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
        try memory.loadPersistentStores()
        for stack in [first, elsewhere, memory] { try Self.saveBook("Dune", stack) }
        #expect(try Self.count(second) == 1)
        let kept = second.newBackgroundContext()

        // The reset loop, run on the first stack's coordinator.
        let coordinator = first.persistentStoreCoordinator
        for store in coordinator.persistentStores {
            try coordinator.destroyPersistentStore(at: store.url!, ofType: store.type, options: nil)
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))

        // The second stack no longer uses the deleted file: a typed error, nothing written.
        #expect(second.persistentStoreCoordinator.persistentStores.isEmpty)
        #expect(!second.hasLoadedStores)
        kept.performAndWait {
            _ = expectError(.noStore) { _ = try kept.count(for: FetchRequest(entityName: "Book")) }
            _ = expectError(.noStore) {
                _ = try kept.insertBook("Emma")
                try kept.save()
            }
        }
        #expect(!FileManager.default.fileExists(atPath: url.path))
        // Stacks on other files, and in-memory stores, are left alone.
        #expect(try Self.count(elsewhere) == 1)
        #expect(try Self.count(memory) == 1)

        // Both load the new, empty store, and share it again.
        try first.loadPersistentStores()
        try second.loadPersistentStores()
        #expect(try Self.count(second) == 0)
        try Self.saveBook("Emma", first)
        #expect(try Self.count(second) == 1)
    }

    /// A context that inserted objects of an entity before the store was destroyed and added again
    /// inserts the next ones into the new store (found by the port of VirtualTourist's stack).
    @Test func aContextInsertsIntoTheStoreAddedAgain() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            _ = try context.insert(entityName: "Book").setValue("Dune", forKey: "title")
            try context.save()
        }
        try coordinator.destroyPersistentStore(at: url, ofType: SQLiteStoreType, options: nil)
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        try context.performAndWait {
            _ = try context.insert(entityName: "Book").setValue("Emma", forKey: "title")
            try context.save()
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 1)
        }
    }
}
