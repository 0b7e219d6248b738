import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore

/// Core Data's `migratePersistentStore`: a loaded store's objects move into a new store (another
/// SQLite file, or memory), which takes its place in the coordinator; a failure changes nothing.
@Suite struct MigratePersistentStoreTests {
    /// A stack on a SQLite file at `url` (created), filled with `people` people.
    static func filledStack(at url: URL, people: Int, history: Bool = false) throws -> PersistentStack {
        let stack = PersistentStack(name: "Move", model: try StoreMoveFixture.model())
        stack.persistentStoreDescriptions[0].url = url
        if history { stack.persistentStoreDescriptions[0].setOption(true, forKey: PersistentHistoryTrackingKey) }
        try stack.loadPersistentStores()
        try StoreMoveFixture.fill(stack.newBackgroundContext(), people: people)
        return stack
    }

    /// What the stack's stores hold, read by a new context.
    static func contents(_ stack: PersistentStack) throws -> [String] {
        try StoreMoveFixture.contents(stack.newBackgroundContext())
    }

    /// What the SQLite file at `url` holds, read by a stack of its own.
    static func contents(ofFileAt url: URL) throws -> [String] {
        let stack = PersistentStack(name: "Check", model: try StoreMoveFixture.model())
        stack.persistentStoreDescriptions[0].url = url
        try stack.loadPersistentStores()
        return try contents(stack)
    }

    @Test func aFileMovesToAnotherFileWithEveryValueAndLink() throws {
        let directory = TemporaryDirectory()
        let old = directory.file("Old.sqlite")
        let stack = try Self.filledStack(at: old, people: 1_200)
        let before = try Self.contents(stack)
        #expect(before.count == 1_200 + 120 + 5 + 2_400 + 600)
        let coordinator = stack.persistentStoreCoordinator
        let context = stack.newBackgroundContext()
        let oldID = try context.performAndWait {
            try #require(try context.fetch(FetchRequest(entityName: "Person", sortKeys: [SortKey("name")])).first).objectID
        }

        let new = directory.file("New.sqlite")
        let moved = try coordinator.migratePersistentStore(
            coordinator.persistentStores[0], to: new, options: nil, withType: SQLiteStoreType)

        #expect(moved.url?.standardizedFileURL.path == new.standardizedFileURL.path)
        #expect(coordinator.persistentStores == [moved])
        // The stack lists the new store in place of the old one: loading again loads nothing.
        #expect(stack.persistentStoreDescriptions == [moved])
        try stack.loadPersistentStores()
        #expect(coordinator.persistentStores == [moved])
        #expect(try Self.contents(stack) == before)
        // The old file is left as it was.
        #expect(try Self.contents(ofFileAt: old) == before)

        // The old ID names the same object in the new store; the old store's objects are gone.
        let newID = try #require(coordinator.objectID(migratedFrom: oldID))
        #expect(newID != oldID && newID.entity === oldID.entity && newID.key == oldID.key)
        let name = try context.performAndWait { try context.existingObject(with: newID).value(forKey: "name") as? String }
        #expect(name == "person00000")
        #expect(coordinator.objectID(migratedFrom: newID) == nil)
        // The old ID's URI and string form (durable IDs kept elsewhere) resolve to the new ID.
        #expect(try stack.objectID(forURIRepresentation: oldID.uriRepresentation()) == newID)
        #expect(try stack.objectID(forStringRepresentation: oldID.stringRepresentation) == newID)

        // The new store goes on: new objects get keys of their own, constraints hold.
        let fresh = stack.newBackgroundContext()
        try fresh.performAndWait {
            let person = try fresh.insert(entityName: "Person")
            try person.setValue("newcomer", forKey: "name")
            let item = try fresh.insert(entityName: "Gadget")
            try item.setValue("new-item", forKey: "code")
            try person.setRelatedObjects([item], forKey: "items")
            try fresh.save()
            #expect(try fresh.count(for: FetchRequest(entityName: "Person")) == 1_201)
            #expect(try fresh.count(for: FetchRequest(entityName: "Item")) == 2_401)
            let twin = try fresh.insert(entityName: "Person")
            try twin.setValue("newcomer", forKey: "name")
            expectError(.constraintViolation) { try fresh.save() }
        }
        // A stack that opens the new file finds it all.
        #expect(try Self.contents(ofFileAt: new).count == before.count + 2)
    }

    /// A migration that found its store and then cannot mark it as migrating says why: another
    /// migration of it is under way, a migration on another thread replaced it, or another call
    /// (another stack's destroyPersistentStore) took it out in between. (That window is a race
    /// between the look-up and the mark: the mark is asked here directly.)
    @Test func aStoreThatCannotBeginMigratingSaysWhy() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 2)
        let coordinator = stack.persistentStoreCoordinator
        let store = try #require(coordinator.loadedStores.first)
        try coordinator.beginMigration(of: store)
        let again = expectError(.invalidArgument) { try coordinator.beginMigration(of: store) }
        #expect(again?.message.contains("is migrating already") == true, "\(again?.message ?? "")")
        coordinator.endMigration(of: store)

        let moved = try coordinator.migratePersistentStore(
            coordinator.persistentStores[0], to: directory.file("New.sqlite"), options: nil, withType: SQLiteStoreType)
        let replaced = expectError(.invalidArgument) { try coordinator.beginMigration(of: store) }
        #expect(replaced?.message.contains("replaced it with \(moved)") == true, "\(replaced?.message ?? "")")

        let current = try #require(coordinator.loadedStores.first)
        _ = try coordinator.takeStore(moved)
        let gone = expectError(.invalidArgument) { try coordinator.beginMigration(of: current) }
        #expect(gone?.message.contains("is no longer loaded: another call took it out") == true, "\(gone?.message ?? "")")
        #expect(gone?.message.contains("migrating already") == false)
    }

    /// A store moved away and back again, then taken out by another call: a migration that found
    /// it says another call took it out, not that the migration long before (to where it went
    /// first, no longer loaded) replaced it.
    @Test func aStoreMovedBackAndTakenOutIsNotSaidToBeReplacedByWhereItWentFirst() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 2)
        let coordinator = stack.persistentStoreCoordinator
        let original = try #require(coordinator.loadedStores.first).storeDescription
        let away = try coordinator.migratePersistentStore(
            coordinator.persistentStores[0], to: directory.file("Away.sqlite"), options: nil, withType: SQLiteStoreType)
        // Back where it was (the file it left removed first; its -wal and -shm files need not
        // exist), so that it has its old description.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory.file("Old.sqlite").path + suffix) }
        let back = try coordinator.migratePersistentStore(away, to: original)
        let returned = try #require(coordinator.loadedStores.first)
        #expect(returned.storeDescription == original)
        _ = try coordinator.takeStore(back)
        let gone = expectError(.invalidArgument) { try coordinator.beginMigration(of: returned) }
        #expect(gone?.message.contains("is no longer loaded: another call took it out") == true, "\(gone?.message ?? "")")
        #expect(gone?.message.contains("replaced it with") == false, "\(gone?.message ?? "")")
    }

    @Test func aFileMovesIntoMemoryAndBack() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 60)
        let before = try Self.contents(stack)
        let coordinator = stack.persistentStoreCoordinator

        let memory = try coordinator.migratePersistentStore(
            coordinator.persistentStores[0], to: URL(fileURLWithPath: "/dev/null"), type: .inMemory)
        #expect(memory.kind == .inMemory)
        #expect(try Self.contents(stack) == before)
        // The stack's only store was replaced: it still has a store loaded.
        #expect(stack.hasLoadedStores)

        let back = directory.file("Back.sqlite")
        try coordinator.migratePersistentStore(memory, to: StoreDescription(url: back))
        #expect(coordinator.persistentStores.map(\.kind) == [.sqlite])
        #expect(try Self.contents(ofFileAt: back) == before)
        #expect(stack.hasLoadedStores)
        try coordinator.remove(coordinator.persistentStores[0])
        #expect(!stack.hasLoadedStores)
    }

    @Test func aDestinationThatHoldsObjectsIsRefusedAndNothingChanges() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 20)
        let other = directory.file("Other.sqlite")
        let otherContents = try Self.contents(Self.filledStack(at: other, people: 3))
        let before = try Self.contents(stack)
        let coordinator = stack.persistentStoreCoordinator
        let store = coordinator.persistentStores[0]

        let error = expectError(.invalidArgument) { try coordinator.migratePersistentStore(store, to: StoreDescription(url: other)) }
        #expect(error?.message.contains("already holds") == true)
        #expect(coordinator.persistentStores == [store])
        #expect(try Self.contents(stack) == before)
        #expect(try Self.contents(ofFileAt: other) == otherContents)
        // The source still saves.
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            try context.insert(entityName: "Tag").setValue("late", forKey: "label")
            try context.save()
        }

        expectError(.invalidArgument) { try coordinator.migratePersistentStore(store, to: store) }
        expectError(.invalidArgument) {
            try coordinator.migratePersistentStore(StoreDescription(url: directory.file("Nowhere.sqlite")), to: .inMemory())
        }
        expectError(.invalidArgument) { try coordinator.migratePersistentStore(store, to: directory.file("X.sqlite"), withType: "Binary") }
        #expect(!FileManager.default.fileExists(atPath: directory.file("X.sqlite").path))
    }

    @Test func aCopyThatBreaksAConstraintLeavesNoFileAndTheSourceLoaded() throws {
        let directory = TemporaryDirectory()
        let old = directory.file("Old.sqlite")
        let stack = try Self.filledStack(at: old, people: 1_100)
        let coordinator = stack.persistentStoreCoordinator
        let store = coordinator.persistentStores[0]
        // Two people of the source share a name (written past the store, its unique index dropped):
        // the destination's constraint refuses the copy, in the second batch of people.
        let raw = try SQLiteConnection(path: old.path, readOnly: false, busyTimeout: 5)
        try raw.execute("DROP INDEX \"\(StoreIndexes.indexName("Person", ["name"], unique: true))\"")
        try raw.execute("UPDATE \"Person\" SET \"name\" = 'person01050' WHERE \"name\" = 'person01060'")
        let before = try Self.contents(stack)

        let new = directory.file("New.sqlite")
        let finder = stack.newBackgroundContext()
        let twins = try finder.performAndWait {
            try finder.fetch(FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "name == 'person01050'")))
                .map(\.objectID)
        }
        #expect(twins.count == 2)
        let error = expectError(.constraintViolation) { try coordinator.migratePersistentStore(store, to: StoreDescription(url: new)) }
        #expect(error?.key == "name")
        // The error names the entity and both objects, by their IDs in the source (the later one first).
        #expect(error?.entityName == "Person")
        #expect(Set(error?.objectIDs ?? []) == Set(twins))
        #expect(error?.message.contains("'Person'") == true)
        for suffix in ["", "-wal", "-shm", "-journal"] { #expect(!FileManager.default.fileExists(atPath: new.path + suffix)) }
        #expect(coordinator.persistentStores == [store])
        #expect(try Self.contents(stack) == before)
    }

    @Test func historyIsNotCarried() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 10, history: true)
        let coordinator = stack.persistentStoreCoordinator
        var destination = StoreDescription(url: directory.file("New.sqlite"))
        destination.setOption(true, forKey: PersistentHistoryTrackingKey)
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: destination)

        let context = stack.newBackgroundContext()
        func transactions() throws -> [PersistentHistoryTransaction] {
            try context.performAndWait {
                try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).result
                    as? [PersistentHistoryTransaction] ?? []
            }
        }
        #expect(try transactions().isEmpty)
        try context.performAndWait {
            try context.insert(entityName: "Tag").setValue("after", forKey: "label")
            try context.save()
        }
        #expect(try transactions().count == 1)
    }
    @Test(arguments: [false, true]) func keysOfDeletedOrReservedObjectsAreNeverHandedOutAgain(intoMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 20)
        let burnt = try StoreMoveFixture.burnKeys(stack)
        let coordinator = stack.persistentStoreCoordinator
        let destination = intoMemory ? StoreDescription.inMemory() : StoreDescription(url: directory.file("New.sqlite"))
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: destination)

        let fresh = try StoreMoveFixture.insertPersonAndTag(stack, "after")
        #expect(fresh.person > burnt.person)
        #expect(fresh.tag > burnt.tag)
    }

    /// The tables and the recorded model version of the SQLite file at `url`, read past any store.
    static func tablesAndVersion(ofFileAt url: URL) throws -> [String] {
        let raw = try SQLiteConnection(path: url.path, readOnly: true, busyTimeout: 5)
        let tables = try raw.textRows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", []).map { $0[0] }
        let hash = try raw.textRows("SELECT value FROM _skerry_metadata WHERE key = 'modelVersionHash'", []).map { $0[0] }
        return tables + hash
    }

    @Test(arguments: [0, 2]) func aDestinationOfAnotherModelVersionIsRefusedUntouched(tags: Int) throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 5)
        let coordinator = stack.persistentStoreCoordinator
        let store = coordinator.persistentStores[0]
        // A file written with the older model, with or without objects; automatic migration is on.
        let other = directory.file("Other.sqlite")
        let older = PersistentStack(name: "Older", model: try StoreMoveFixture.olderModel())
        older.persistentStoreDescriptions[0].url = other
        try older.loadPersistentStores()
        let context = older.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<tags { try context.insert(entityName: "Tag").setValue("old\(index)", forKey: "label") }
            try context.save()
        }
        let before = try Self.tablesAndVersion(ofFileAt: other)
        #expect(!before.contains("Person"))

        let error = expectError(.invalidArgument) { try coordinator.migratePersistentStore(store, to: StoreDescription(url: other)) }
        #expect(error?.message.contains("another version of the model") == true)
        #expect(coordinator.persistentStores == [store])
        // Not migrated: the older build still opens it as it was.
        #expect(try Self.tablesAndVersion(ofFileAt: other) == before)
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Tag")) } == tags)
    }

    @Test func objectsInsertedAndNotSavedBeforeTheMigrationAreSavedIntoTheNewStore() throws {
        let directory = TemporaryDirectory()
        let stack = try Self.filledStack(at: directory.file("Old.sqlite"), people: 10)
        let coordinator = stack.persistentStoreCoordinator
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let tag = try context.insert(entityName: "Tag")
            try tag.setValue("pending", forKey: "label")
            let person = try context.insert(entityName: "Person")
            try person.setValue("pending-person", forKey: "name")
            try person.setRelatedObjects([tag], forKey: "tags")
            try person.setRelatedObject(tag, forKey: "favorite")
        }
        let new = directory.file("New.sqlite")
        try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: StoreDescription(url: new))

        let savedID = try context.performAndWait {
            let person = try #require(context.insertedObjects.first { $0.entity.name == "Person" })
            try context.save()
            #expect(context.insertedObjects.isEmpty)
            return person.objectID
        }
        // Its ID names the new store: another context of the stack finds it by that ID.
        let fresh = stack.newBackgroundContext()
        #expect(try fresh.performAndWait { try fresh.existingObject(with: savedID).value(forKey: "name") as? String } == "pending-person")
        // In the new store, linked, with keys of their own; the old file never saw them.
        let check = PersistentStack(name: "Check", model: try StoreMoveFixture.model())
        check.persistentStoreDescriptions[0].url = new
        try check.loadPersistentStores()
        let reader = check.newBackgroundContext()
        try reader.performAndWait {
            let request = FetchRequest(entityName: "Person", predicate: try FetchPredicate(format: "name == 'pending-person'"))
            let person = try #require(try reader.fetch(request).first)
            #expect(person.objectID.key == 11)
            let tags = try person.relatedObjects(forKey: "tags").compactMap { try $0.value(forKey: "label") as? String }
            #expect(tags == ["pending"])
            #expect(try person.relatedObject(forKey: "favorite")?.value(forKey: "label") as? String == "pending")
        }
        #expect(try !Self.contents(ofFileAt: directory.file("Old.sqlite")).contains { $0.contains("pending") })
    }
}
