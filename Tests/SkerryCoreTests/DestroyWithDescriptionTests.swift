import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore

/// `destroyPersistentStore(with:)` and `replacePersistentStore(_:withPersistentStoreFrom:)`, the
/// spellings with store descriptions, on SQLite and in-memory stores (PostgreSQL:
/// PostgresMigrateStoreTests).
@Suite struct DestroyWithDescriptionTests {
    @Test func aFileIsDestroyedAndReplacedThroughItsDescription() throws {
        let directory = TemporaryDirectory()
        let stack = PersistentStack(name: "Move", model: try StoreMoveFixture.model())
        let url = directory.file("Store.sqlite")
        stack.persistentStoreDescriptions = [StoreDescription(url: url)]
        try stack.loadPersistentStores()
        try StoreMoveFixture.fill(stack.newBackgroundContext(), people: 5)
        let before = try StoreMoveFixture.contents(stack.newBackgroundContext())
        let coordinator = stack.persistentStoreCoordinator

        // A copy through replace, then the original destroyed: the copy holds everything.
        let copy = directory.file("Copy.sqlite")
        try coordinator.replacePersistentStore(StoreDescription(url: copy), withPersistentStoreFrom: StoreDescription(url: url))
        try coordinator.destroyPersistentStore(with: StoreDescription(url: url))
        #expect(coordinator.persistentStores.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        stack.persistentStoreDescriptions = [StoreDescription(url: copy)]
        try stack.loadPersistentStores()
        #expect(try StoreMoveFixture.contents(stack.newBackgroundContext()) == before)

        // In memory: destroyed (removed); it has no file to copy.
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: .inMemory())
        expectError(.invalidArgument) {
            try coordinator.replacePersistentStore(StoreDescription(url: url), withPersistentStoreFrom: coordinator.persistentStores[0])
        }
        try coordinator.destroyPersistentStore(with: coordinator.persistentStores[0])
        #expect(coordinator.persistentStores.isEmpty)
    }
}
