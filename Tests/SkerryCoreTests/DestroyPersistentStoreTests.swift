import Foundation
import Testing

@testable import SkerryCore

/// Core Data's `destroyPersistentStore(at:ofType:options:)` and `remove(_:)`: a store's files go, a
/// loaded store is removed from its coordinator first, in-memory stores have nothing to destroy.
@Suite struct DestroyPersistentStoreTests {
    static let files = ["", "-wal", "-shm", "-journal"]

    static func exists(_ url: URL, _ suffix: String) -> Bool {
        FileManager.default.fileExists(atPath: url.path + suffix)
    }

    /// Saves a book into the store at `url` through a stack that is released on return.
    static func saveBook(at url: URL) throws {
        let stack = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        stack.persistentStoreDescriptions[0].url = url
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insertBook("Dune")
            try context.save()
        }
    }

    @Test func removesTheStoreFileAndTheFilesBesideIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        try Self.saveBook(at: url)
        // SQLite removes its -wal and -shm files when the last connection closes; stand-ins
        // show that they go too when a crash left them behind.
        for suffix in Self.files.dropFirst() { #expect(FileManager.default.createFile(atPath: url.path + suffix, contents: Data([1]))) }
        let other = directory.file("Other.sqlite")
        try Self.saveBook(at: other)

        // As Core Data code writes it: a coordinator that has not loaded the store.
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        try coordinator.destroyPersistentStore(at: url, ofType: SQLiteStoreType, options: nil)
        for suffix in Self.files { #expect(!Self.exists(url, suffix), "\(suffix)") }
        #expect(Self.exists(other, ""))

        // A new store can be made there; it is empty.
        let stack = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        stack.persistentStoreDescriptions[0].url = url
        try stack.loadPersistentStores()
        let context = stack.newBackgroundContext()
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 0)
    }

    @Test func theResetLoopPortsAsWritten() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let dune = try context.performAndWait {
            let dune = try context.insertBook("Dune")
            _ = try context.insertBook("Emma")
            try context.save()
            return dune.objectID
        }

        // doc: reset-store
        for store in coordinator.persistentStores {
            try coordinator.destroyPersistentStore(at: store.url!, ofType: store.type, options: nil)
        }
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        // doc: end

        #expect(coordinator.persistentStores.count == 1)
        let fresh = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        fresh.persistentStoreCoordinator = coordinator
        #expect(try fresh.performAndWait { try fresh.count(for: FetchRequest(entityName: "Book")) } == 0)

        // The context that held the old store's objects: fetches reach the new store; a change to
        // an object of the destroyed store fails to save with a typed error, and writes nothing.
        try context.performAndWait {
            #expect(try context.fetch(FetchRequest(entityName: "Book")).isEmpty)
            let book = try #require(context.registeredObject(for: dune))
            try book.setValue("Dune Messiah", forKey: "title")
            expectError(.noStore) { try context.save() }
            #expect(context.hasChanges)
        }
        #expect(try fresh.performAndWait { try fresh.count(for: FetchRequest(entityName: "Book")) } == 0)
    }

    @Test func aDestroyedStoreFailsItsContextsWithATypedError() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let dune = try context.performAndWait {
            let dune = try context.insertBook("Dune")
            try context.save()
            try context.refresh(dune, mergeChanges: false)
            return dune.objectID
        }
        try coordinator.destroyPersistentStore(at: url, ofType: SQLiteStoreType, options: [PersistentStoreForceDestroyOption: true])
        for suffix in Self.files { #expect(!Self.exists(url, suffix), "\(suffix)") }
        #expect(coordinator.persistentStores.isEmpty)
        try context.performAndWait {
            expectError(.noStore) { _ = try context.fetch(FetchRequest(entityName: "Book")) }
            expectError(.noStore) { _ = try context.count(for: FetchRequest(entityName: "Book")) }
            // The fault of an object of the removed store cannot be fulfilled: a typed error, no crash.
            let book = try #require(context.registeredObject(for: dune))
            expectError(.objectNotFound) { _ = try book.value(forKey: "title") }
            expectError(.noStore) {
                _ = try context.insertBook("Emma")
                try context.save()
            }
        }
    }

    @Test func aStackLoadsADestroyedStoreAgain() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        try Self.saveBook(at: url)
        let stack = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        stack.persistentStoreDescriptions[0].url = url
        try stack.loadPersistentStores()
        let coordinator = stack.persistentStoreCoordinator
        #expect(try stack.viewContext.performAndWait { try stack.viewContext.count(for: FetchRequest(entityName: "Book")) } == 1)
        for store in coordinator.persistentStores {
            try coordinator.destroyPersistentStore(at: store.url!, ofType: store.type, options: nil)
        }
        #expect(!stack.hasLoadedStores)
        try stack.loadPersistentStores()
        #expect(stack.hasLoadedStores)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 0)
            _ = try context.insertBook("Emma")
            try context.save()
        }
        #expect(try stack.viewContext.performAndWait { try stack.viewContext.count(for: FetchRequest(entityName: "Book")) } == 1)
    }

    @Test func removeTakesAStoreOutAndLeavesItsFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        let added = try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            _ = try context.insertBook("Dune")
            try context.save()
        }
        try coordinator.remove(added)
        #expect(coordinator.persistentStores.isEmpty)
        #expect(coordinator.persistentStore(for: url) == nil)
        #expect(Self.exists(url, ""))
        context.performAndWait { _ = expectError(.noStore) { _ = try context.count(for: FetchRequest(entityName: "Book")) } }
        expectError(.invalidArgument) { try coordinator.remove(added) }

        // Added again, it holds what was saved.
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 1)
    }

    @Test func storesWithoutFilesAndOtherTypes() throws {
        let directory = TemporaryDirectory()
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        // Nothing there, an in-memory store, /dev/null: nothing to do, no error.
        try coordinator.destroyPersistentStore(at: directory.file("Missing.sqlite"), ofType: SQLiteStoreType)
        try coordinator.destroyPersistentStore(at: URL(fileURLWithPath: "/dev/null"), ofType: SQLiteStoreType)
        try coordinator.destroyPersistentStore(at: directory.file("Memory"), ofType: InMemoryStoreType)
        #expect(FileManager.default.fileExists(atPath: "/dev/null"))
        expectError(.invalidArgument) {
            try coordinator.destroyPersistentStore(at: directory.file("Books.xml"), ofType: "XML", options: nil)
        }
    }
}

/// Core Data's `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)`.
@Suite struct ReplacePersistentStoreTests {
    @Test func restoresABackupOverALoadedStore() throws {
        let directory = TemporaryDirectory()
        let backup = directory.file("Backup/Books.sqlite")
        try DestroyPersistentStoreTests.saveBook(at: backup)
        let url = directory.file("Books.sqlite")
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            _ = try context.insertBook("Emma")
            _ = try context.insertBook("Persuasion")
            try context.save()
        }

        try coordinator.replacePersistentStore(
            at: url, destinationOptions: nil, withPersistentStoreFrom: backup, sourceOptions: nil, ofType: SQLiteStoreType)
        #expect(coordinator.persistentStores.isEmpty)
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let titles = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title") as? String }
        }
        #expect(titles == ["Dune"])
        // The backup is untouched.
        #expect(FileManager.default.fileExists(atPath: backup.path))
    }

    @Test func aMissingSourceOrAnotherTypeChangesNothing() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        try DestroyPersistentStoreTests.saveBook(at: url)
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        expectError(.invalidArgument) {
            try coordinator.replacePersistentStore(
                at: url, destinationOptions: nil, withPersistentStoreFrom: directory.file("Missing.sqlite"), sourceOptions: nil,
                ofType: SQLiteStoreType)
        }
        expectError(.invalidArgument) {
            try coordinator.replacePersistentStore(
                at: url, destinationOptions: nil, withPersistentStoreFrom: url, sourceOptions: nil, ofType: InMemoryStoreType)
        }
        // Not a database: SQLite refuses to copy it, the destination stays.
        let junk = directory.file("Junk.sqlite")
        #expect(FileManager.default.createFile(atPath: junk.path, contents: Data(repeating: 7, count: 4096)))
        #expect(throws: SkerryError.self) {
            try coordinator.replacePersistentStore(
                at: url, destinationOptions: nil, withPersistentStoreFrom: junk, sourceOptions: nil, ofType: SQLiteStoreType)
        }
        #expect(!FileManager.default.fileExists(atPath: url.path + ".skerry-replace"))
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 1)
    }
}
