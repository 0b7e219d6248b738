import Foundation
import Testing

@testable import SkerryCore

/// Core Data's spellings of iOS 15 and macOS 12 with `NSPersistentStore.StoreType`
/// (`StoreDescription.StoreType` in Skerry): the same stores as the `ofType:` methods.
@Suite struct StoreTypeSpellingTests {
    @Test func theTypesHaveCoreDatasRawValues() {
        #expect(StoreDescription.StoreType.sqlite.rawValue == SQLiteStoreType)
        #expect(StoreDescription.StoreType.inMemory.rawValue == InMemoryStoreType)
        #expect(StoreDescription.StoreType.binary.rawValue == "Binary")
        #expect(StoreDescription.StoreType.xml.rawValue == "XML")
        #expect(StoreDescription.StoreType(rawValue: "SQLite") == .sqlite)
    }

    @Test func addDestroyAndReplaceWithAStoreType() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.sqlite")
        let backup = directory.file("Backup.sqlite")
        try DestroyPersistentStoreTests.saveBook(at: backup)

        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        let added = try coordinator.addPersistentStore(type: .sqlite, at: url)
        #expect(added.type == SQLiteStoreType && added.url == url)
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            _ = try context.insertBook("Emma")
            _ = try context.insertBook("Persuasion")
            try context.save()
        }

        // Restore the backup over it, add it again: the backup's one book.
        try coordinator.replacePersistentStore(at: url, withPersistentStoreFrom: backup, type: .sqlite)
        #expect(coordinator.persistentStores.isEmpty)
        try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: url, options: nil)
        let titles = try context.performAndWait {
            try context.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title") as? String }
        }
        #expect(titles == ["Dune"])

        // The reset loop in these spellings.
        for store in coordinator.persistentStores {
            try coordinator.destroyPersistentStore(at: store.url!, type: StoreDescription.StoreType(rawValue: store.type), options: nil)
        }
        #expect(coordinator.persistentStores.isEmpty)
        for suffix in DestroyPersistentStoreTests.files { #expect(!DestroyPersistentStoreTests.exists(url, suffix), "\(suffix)") }
        #expect(DestroyPersistentStoreTests.exists(backup, ""))
    }

    @Test func anInMemoryStoreByType() throws {
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        let added = try coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
        #expect(added.type == InMemoryStoreType && added.url == URL(fileURLWithPath: "/dev/null"))
        try coordinator.destroyPersistentStore(at: added.url!, type: .inMemory)
        #expect(coordinator.persistentStores.isEmpty)
    }

    /// Core Data's binary and XML stores have no Skerry counterpart: a typed error, nothing made.
    @Test func binaryAndXMLStoresAreRefused() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Books.store")
        let coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        for type in [StoreDescription.StoreType.binary, .xml] {
            expectError(.invalidArgument) { try coordinator.addPersistentStore(type: type, at: url) }
            expectError(.invalidArgument) { try coordinator.destroyPersistentStore(at: url, type: type) }
            expectError(.invalidArgument) {
                try coordinator.replacePersistentStore(at: url, withPersistentStoreFrom: url, type: type)
            }
        }
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}
