import Foundation
import Testing

@testable import SkerryCore

/// In-memory stores have a URL, as in Core Data (its container's description keeps its URL when its
/// type becomes `NSInMemoryStoreType`; Xcode's template asks for memory with `/dev/null`), so that
/// Core Data's reset loop, which reads `store.url!`, runs on them too.
@Suite struct InMemoryStoreURLTests {
    static let devNull = URL(fileURLWithPath: "/dev/null")

    static func count(_ stack: PersistentStack) throws -> Int {
        let context = stack.newBackgroundContext()
        return try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) }
    }

    static func saveBook(_ stack: PersistentStack) throws {
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            _ = try context.insertBook("Dune")
            try context.save()
        }
    }

    /// Xcode's template: the container's first description pointed at `/dev/null`.
    @Test func theResetLoopRunsOnADevNullStore() throws {
        let stack = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        stack.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
        try stack.loadPersistentStores()
        try Self.saveBook(stack)
        let coordinator = stack.persistentStoreCoordinator
        #expect(coordinator.persistentStores.map(\.url) == [Self.devNull])

        // As Core Data code writes it:
        for store in coordinator.persistentStores {
            try coordinator.destroyPersistentStore(at: store.url!, ofType: store.type, options: nil)
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!stack.hasLoadedStores)
        try stack.loadPersistentStores()
        #expect(try Self.count(stack) == 0)
        #expect(FileManager.default.fileExists(atPath: "/dev/null"))
    }

    /// `StoreDescription.inMemory()` (Core Data: a description of type `NSInMemoryStoreType`
    /// without a URL) is listed at `/dev/null`; one with a URL keeps it, and nothing is written there.
    @Test func anInMemoryStoreIsListedWithItsURLOrDevNull() throws {
        let directory = TemporaryDirectory()
        let stack = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        stack.persistentStoreDescriptions = [.inMemory()]
        try stack.loadPersistentStores()
        #expect(stack.persistentStoreCoordinator.persistentStores.map(\.url) == [Self.devNull])
        #expect(stack.persistentStoreCoordinator.persistentStores.map(\.type) == [InMemoryStoreType])
        // The description the stack was given finds its store.
        try stack.persistentStoreCoordinator.remove(.inMemory())
        #expect(stack.persistentStoreCoordinator.persistentStores.isEmpty)

        // The container's default description, its type changed: it keeps its file URL.
        let memory = PersistentStack(name: "Books", managedObjectModel: Fixtures.model())
        memory.persistentStoreDescriptions[0].url = directory.file("Books.sqlite")
        memory.persistentStoreDescriptions[0].type = InMemoryStoreType
        try memory.loadPersistentStores()
        try Self.saveBook(memory)
        let coordinator = memory.persistentStoreCoordinator
        #expect(coordinator.persistentStores.map(\.url) == [directory.file("Books.sqlite")])
        #expect(coordinator.persistentStore(for: directory.file("Books.sqlite"))?.type == InMemoryStoreType)
        #expect(!FileManager.default.fileExists(atPath: directory.file("Books.sqlite").path))
    }

    /// The reset loop over an in-memory store described with a file URL: the store goes (and its
    /// data), a file someone else keeps at that URL stays (an in-memory store has no files).
    @Test func destroyingAnInMemoryStoreRemovesItAndNoFile() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        #expect(FileManager.default.createFile(atPath: url.path, contents: Data("not ours".utf8)))
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        let added = try coordinator.addPersistentStore(ofType: InMemoryStoreType, configurationName: nil, at: url, options: nil)
        #expect(added.url == url)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            _ = try context.insertBook("Dune")
            try context.save()
        }

        for store in coordinator.persistentStores {
            try coordinator.destroyPersistentStore(at: store.url!, ofType: store.type, options: nil)
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(FileManager.default.contents(atPath: url.path) == Data("not ours".utf8))
        context.performAndWait { _ = expectError(.noStore) { _ = try context.count(for: FetchRequest(entityName: "Book")) } }

        // Added again, it starts empty.
        try coordinator.addPersistentStore(ofType: InMemoryStoreType, configurationName: nil, at: url, options: nil)
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 0)
        // Without a URL: /dev/null.
        let other = StoreCoordinator(managedObjectModel: Fixtures.model())
        #expect(try other.addPersistentStore(ofType: InMemoryStoreType, configurationName: nil, at: nil).url == Self.devNull)
    }
}
