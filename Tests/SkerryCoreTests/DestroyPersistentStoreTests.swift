import Foundation
import Testing

@testable import SkerryCore

/// Core Data's `destroyPersistentStore(at:ofType:options:)`: a store's files go, a loaded store is
/// refused, in-memory stores have nothing to destroy.
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

    @Test func aLoadedStoreIsRefusedAndKeepsWorking() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: nil)
        let error = expectError(.invalidArgument) {
            try coordinator.destroyPersistentStore(at: url, ofType: SQLiteStoreType, options: [PersistentStoreForceDestroyOption: true])
        }
        #expect(error?.message.contains("loaded by this coordinator") == true)
        #expect(Self.exists(url, ""))
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            try context.insertBook("Dune")
            try context.save()
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 1)
        }
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
