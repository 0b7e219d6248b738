import Foundation
import SkerryTestSupport
import Testing

@testable import SkerryCore

/// How the copy behind `migratePersistentStore` bounds its batches, and what it does when the
/// source is saved to while it copies.
@Suite struct StoreCopyBatchTests {
    @Test func largeRowsComeInSmallerBatches() throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Blob", attributes: [AttributeDescription("bytes", .binary), AttributeDescription("index", .integer32)])
        ])
        let source = PersistentStack(name: "Source", model: model)
        source.persistentStoreDescriptions = [.inMemory()]
        try source.loadPersistentStores()
        let context = source.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<60 {
                let blob = try context.insert(entityName: "Blob")
                try blob.setValue(Data(repeating: UInt8(index), count: 100_000), forKey: "bytes")
                try blob.setValue(Int32(index), forKey: "index")
            }
            try context.save()
        }
        let directory = TemporaryDirectory()
        let destination = PersistentStack(name: "Destination", model: model)
        destination.persistentStoreDescriptions = [StoreDescription(url: directory.file("D.sqlite"))]
        try destination.loadPersistentStores()

        let sizes = Locked<[Int]>([])
        var copy = StoreCopy(
            source: try #require(source.persistentStoreCoordinator.loadedStores.first),
            destination: try #require(destination.persistentStoreCoordinator.loadedStores.first), entities: model.entities)
        copy.byteBudget = 1_000_000
        copy.rowBatchObserver = { sizes.append($0) }
        try copy.run()

        // The first batch learns the rows' size (16 rows); then about 1 MB, 9 rows, at a time.
        #expect(sizes.value == [16, 9, 9, 9, 9, 8])
        let check = destination.newBackgroundContext()
        let copied = try check.performAndWait {
            try check.fetch(FetchRequest(entityName: "Blob", sortKeys: [SortKey("index")])).map {
                try $0.value(forKey: "bytes") as? Data
            }
        }
        #expect(copied == (0..<60).map { Data(repeating: UInt8($0), count: 100_000) })
    }

    /// Keys are read a page at a time: with pages of 7 keys, every batch holds 7 rows at most,
    /// and every object and link still arrives.
    @Test(arguments: [false, true]) func keysAreReadAPageAtATime(intoMemory: Bool) throws {
        let directory = TemporaryDirectory()
        let stack = try MigratePersistentStoreTests.filledStack(at: directory.file("Old.sqlite"), people: 40)
        let before = try MigratePersistentStoreTests.contents(stack)
        let destination = PersistentStack(name: "Destination", model: stack.model)
        destination.persistentStoreDescriptions = [intoMemory ? .inMemory() : StoreDescription(url: directory.file("New.sqlite"))]
        try destination.loadPersistentStores()

        let sizes = Locked<[Int]>([])
        var copy = StoreCopy(
            source: try #require(stack.persistentStoreCoordinator.loadedStores.first),
            destination: try #require(destination.persistentStoreCoordinator.loadedStores.first), entities: stack.model.entities)
        copy.keyPage = 7
        copy.rowBatchObserver = { sizes.append($0) }
        try copy.run()

        #expect(sizes.value.allSatisfy { $0 <= 7 })
        // Every row: 40 people, 4 teams, 5 tags, 80 items (gadgets among them), 20 desks.
        let rows: Int = 149
        #expect(sizes.value.reduce(0, +) == rows)
        #expect(try MigratePersistentStoreTests.contents(destination) == before)
    }

    /// Objects with many related objects come in smaller batches of the second pass: with a
    /// budget of 500 related objects and 100 members per owner, 5 owners a batch after the first;
    /// every member arrives, in its owner's order.
    @Test(arguments: [false, true]) func objectsWithManyMembersComeInSmallerBatches(intoMemory: Bool) throws {
        let model = try ObjectModel(entities: [
            EntityDescription(
                name: "Owner", attributes: [AttributeDescription("name", .string)],
                relationships: [RelationshipDescription("members", destination: "Member", inverse: "owner", toMany: true, ordered: true)]),
            EntityDescription(
                name: "Member", attributes: [AttributeDescription("index", .integer32)],
                relationships: [RelationshipDescription("owner", destination: "Owner", inverse: "members")]),
        ])
        let directory = TemporaryDirectory()
        let source = PersistentStack(name: "Source", model: model)
        source.persistentStoreDescriptions = [StoreDescription(url: directory.file("Old.sqlite"))]
        try source.loadPersistentStores()
        let context = source.newBackgroundContext()
        // 30 owners of 100 members each, each list in the reverse of the members' key order.
        try context.performAndWait {
            for owner in 0..<30 {
                let object = try context.insert(entityName: "Owner")
                try object.setValue(String(format: "owner %02d", owner), forKey: "name")
                var members: [EntityObject] = []
                for index in 0..<100 {
                    let member = try context.insert(entityName: "Member")
                    try member.setValue(Int32(owner * 100 + index), forKey: "index")
                    members.append(member)
                }
                try object.setRelatedObjects(members.reversed(), forKey: "members")
            }
            try context.save()
        }
        let destination = PersistentStack(name: "Destination", model: model)
        destination.persistentStoreDescriptions = [intoMemory ? .inMemory() : StoreDescription(url: directory.file("New.sqlite"))]
        try destination.loadPersistentStores()

        let batches = Locked<[[Int]]>([])
        var copy = StoreCopy(
            source: try #require(source.persistentStoreCoordinator.loadedStores.first),
            destination: try #require(destination.persistentStoreCoordinator.loadedStores.first), entities: model.entities)
        copy.memberBudget = 500
        copy.linkBatchObserver = { batches.append([$0, $1]) }
        try copy.run()

        // The owners' batches (those with 100 members each): the first 16 owners, then 5 at a time.
        let owners: [[Int]] = batches.value.filter { $0[1] == 100 * $0[0] }
        #expect(owners == [[16, 1_600], [5, 500], [5, 500], [4, 400]])
        // The members' batches (one owner each): 16, then 500 at a time.
        let memberBatches: [Int] = batches.value.filter { $0[1] == $0[0] }.map { $0[0] }
        #expect(memberBatches == [16, 500, 500, 500, 500, 500, 484])
        let check = destination.newBackgroundContext()
        let lists = try check.performAndWait {
            try check.fetch(FetchRequest(entityName: "Owner", sortKeys: [SortKey("name")])).map {
                try $0.relatedObjects(forKey: "members").map { try #require($0.value(forKey: "index") as? Int32) }
            }
        }
        var expected: [[Int32]] = []
        for owner in 0..<30 {
            expected.append((0..<100).reversed().map { Int32(owner * 100 + $0) })
        }
        #expect(lists == expected)
    }

    @Test func aSaveToTheSourceDuringTheCopyFailsItAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let stack = try MigratePersistentStoreTests.filledStack(at: directory.file("Old.sqlite"), people: 30)
        let coordinator = stack.persistentStoreCoordinator
        let store = coordinator.persistentStores[0]
        let new = directory.file("New.sqlite")
        // Once the copy writes people into the new file, another context saves to the old one.
        let saved = Locked(false)
        let observation = stack.addEventObserver(statements: .all) { event in
            guard case .statement(let trace) = event, trace.store.url?.standardizedFileURL.path == new.standardizedFileURL.path,
                trace.sql.hasPrefix("INSERT INTO \"Person\""), !saved.value
            else { return }
            saved.set(true)
            let context = stack.newBackgroundContext()
            context.performAndWait {
                do {
                    try context.insert(entityName: "Tag").setValue("meanwhile", forKey: "label")
                    try context.save()
                } catch {
                    Issue.record("The save during the copy failed: \(error)")
                }
            }
        }
        defer { observation.cancel() }

        expectError(.mergeConflict) { try coordinator.migratePersistentStore(store, to: StoreDescription(url: new)) }
        #expect(saved.value)
        #expect(coordinator.persistentStores == [store])
        #expect(!FileManager.default.fileExists(atPath: new.path))
        // The save is in the old store, which is still the stack's.
        #expect(try MigratePersistentStoreTests.contents(stack).contains { $0.hasPrefix("Tag:meanwhile ") })
    }

    @Test func aMigratingStoreIsNeitherRemovedNorMigratedAgainSoTheCopyAlwaysTakesItsPlace() throws {
        let directory = TemporaryDirectory()
        let stack = try MigratePersistentStoreTests.filledStack(at: directory.file("Old.sqlite"), people: 30)
        let before = try MigratePersistentStoreTests.contents(stack)
        let coordinator = stack.persistentStoreCoordinator
        let store = coordinator.persistentStores[0]
        let new = directory.file("New.sqlite")
        // Once the copy writes people into the new file, the old store is removed, and migrated
        // elsewhere, as another thread could.
        let refused = Locked<[Bool]>([])
        let observation = stack.addEventObserver(statements: .all) { event in
            guard case .statement(let trace) = event, trace.store.url?.standardizedFileURL.path == new.standardizedFileURL.path,
                trace.sql.hasPrefix("INSERT INTO \"Person\""), refused.value.isEmpty
            else { return }
            func isRefused(_ attempt: () throws(SkerryError) -> Void) -> Bool {
                do {
                    try attempt()
                    return false
                } catch {
                    return error.code == .invalidArgument
                }
            }
            let removal = isRefused { () throws(SkerryError) in try coordinator.remove(store) }
            let migration = isRefused { () throws(SkerryError) in _ = try coordinator.migratePersistentStore(store, to: .inMemory()) }
            refused.set([removal, migration])
        }
        defer { observation.cancel() }

        let moved = try coordinator.migratePersistentStore(store, to: StoreDescription(url: new))
        #expect(refused.value == [true, true])
        #expect(coordinator.persistentStores == [moved])
        #expect(try MigratePersistentStoreTests.contents(stack) == before)
        // Once the migration returned, the new store is removed as any other.
        try coordinator.remove(moved)
        #expect(coordinator.persistentStores.isEmpty)
    }
}
