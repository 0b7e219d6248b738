import Foundation
import Testing

@testable import SkerryCore

// Core Data code from public projects' helpers (batch delete and merge into live contexts, merge
// policies by type, refreshing everything, sort descriptors), ported with the names page's
// renames only, against real stores.

extension ObjectContext {
    /// A batch delete whose deletions reach this context at once, as many projects write it.
    fileprivate func executeAndMergeChanges(using batchDeleteRequest: BatchDeleteRequest) throws {
        var batchDeleteRequest = batchDeleteRequest // a value here; Core Data's request is a class
        batchDeleteRequest.resultType = .resultTypeObjectIDs
        let result = try execute(batchDeleteRequest)
        let changes: [AnyHashable: Any] = [DeletedObjectsKey: result.result as? [ObjectID] ?? []]
        ObjectContext.mergeChanges(fromRemoteContextSave: changes, into: [self])
    }
}

@Suite(.serialized) struct CoreDataMergePortTests {
    private let coordinator: StoreCoordinator
    private let directory = TemporaryDirectory()

    init() throws {
        coordinator = StoreCoordinator(managedObjectModel: Fixtures.model())
        try coordinator.addPersistentStore(
            ofType: SQLiteStoreType, configurationName: nil, at: directory.file("Books.sqlite"),
            options: [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true])
    }

    private func newContext() -> ObjectContext {
        let context = ObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Saves books with these titles; returns their IDs.
    private func saveBooks(_ titles: [String]) throws -> [ObjectID] {
        let context = newContext()
        return try context.performAndWait {
            let books = try titles.map { try context.insertBook($0) }
            try context.save()
            return books.map(\.objectID)
        }
    }

    private func titles(_ context: ObjectContext, _ request: FetchRequest = FetchRequest(entityName: "Book")) throws -> [String] {
        try context.performAndWait { try context.fetch(request).map { try $0.value(forKey: "title", as: String.self) } }
    }

    @Test func aBatchDeleteMergedByIDsOrURIsDropsTheObjectsFromLiveContexts() throws {
        let ids = try saveBooks(["Dune", "Emma", "Ulysses"])
        let live = newContext()
        let other = newContext()
        for context in [live, other] {
            try context.performAndWait { for id in ids { _ = try context.existingObject(with: id) } }
        }

        try live.performAndWait {
            var request = FetchRequest(entityName: "Book")
            request.predicate = try FetchPredicate(format: "title BEGINSWITH %@", "D")
            try live.executeAndMergeChanges(using: BatchDeleteRequest(fetchRequest: request))
            #expect(live.registeredObject(for: ids[0]) == nil)
            #expect(live.registeredObject(for: ids[1]) != nil)
        }
        // The other context still holds Dune until the IDs (here as URIs) are merged into it too.
        #expect(other.performAndWait { other.registeredObject(for: ids[0]) != nil })
        ObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: [ids[0].uriRepresentation()]], into: [other])
        #expect(other.performAndWait { other.registeredObject(for: ids[0]) == nil })
        #expect(try titles(other).sorted() == ["Emma", "Ulysses"])

        // A count result is a number, as in Core Data.
        try live.performAndWait {
            var request = BatchDeleteRequest(entityName: "Book")
            request.resultType = .resultTypeCount
            let deleted = try live.execute(request)
            #expect(deleted.result as? Int == 2)
        }
    }

    @Test func changesItCannotReadAreRecordedAndMergeNothing() throws {
        let ids = try saveBooks(["Dune"])
        let context = newContext()
        try context.performAndWait { _ = try context.existingObject(with: ids[0]) }
        ObjectContext.mergeChanges(fromRemoteContextSave: ["refreshed": ids], into: [context])
        ObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: ["Dune"]], into: [context])
        try context.performAndWait {
            #expect(context.registeredObject(for: ids[0]) != nil)
            #expect((context.recordedError as? SkerryError)?.code == .invalidArgument)
            try context.insertBook("Emma")
            expectError(.invalidArgument) { try context.save() }
        }
        #expect(try titles(newContext()) == ["Dune"])
    }

    @Test func mergePoliciesByTypeAndByConstantAreTheSkerryPolicies() throws {
        #expect(MergePolicy(merge: .errorMergePolicyType) == ErrorMergePolicy)
        #expect(MergePolicy(merge: .mergeByPropertyStoreTrumpMergePolicyType) == .mergeByPropertyStoreTrump)
        #expect(MergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType) == MergeByPropertyObjectTrumpMergePolicy)
        #expect(MergePolicy(merge: .overwriteMergePolicyType) == OverwriteMergePolicy)
        #expect(MergePolicy(merge: .rollbackMergePolicyType) == RollbackMergePolicy)

        // An upsert by ISBN under object trump, as seed code sets it up.
        let first = newContext()
        try first.performAndWait {
            try first.insertBook("Dune", isbn: "1")
            try first.save()
        }
        let second = newContext()
        second.mergePolicy = MergePolicy(merge: .mergeByPropertyObjectTrumpMergePolicyType)
        try second.performAndWait {
            try second.insertBook("Dune, revised", isbn: "1")
            try second.save()
        }
        #expect(try titles(newContext()) == ["Dune, revised"])
    }

    @Test func refreshAllObjectsTakesTheStoresValuesAndKeepsUnsavedChanges() throws {
        let ids = try saveBooks(["Dune", "Emma"])
        let reader = newContext()
        try reader.performAndWait {
            _ = try reader.existingObject(with: ids[0]).value(forKey: "title", as: String.self)
            try reader.existingObject(with: ids[1]).setValue(Int32(1815), forKey: "year")
        }
        let writer = newContext()
        try writer.performAndWait {
            try writer.existingObject(with: ids[0]).setValue("Dune Messiah", forKey: "title")
            try writer.existingObject(with: ids[1]).setValue("Emma (2nd ed.)", forKey: "title")
            try writer.save()
        }
        try reader.performAndWait {
            #expect(try reader.existingObject(with: ids[0]).value(forKey: "title", as: String.self) == "Dune")
            reader.refreshAllObjects()
            let dune = try reader.existingObject(with: ids[0])
            let emma = try reader.existingObject(with: ids[1])
            #expect(try dune.value(forKey: "title", as: String.self) == "Dune Messiah")
            #expect(try emma.value(forKey: "title", as: String.self) == "Emma (2nd ed.)")
            #expect(try emma.value(forKey: "year", as: Int32?.self) == 1815)
            #expect(emma.isUpdated && !dune.isUpdated)
            try reader.save()
        }
        #expect(try titles(newContext()).sorted() == ["Dune Messiah", "Emma (2nd ed.)"])
    }

    @Test func sortDescriptorsAndFetchLimitAsCoreDataCodeSetsThem() throws {
        _ = try saveBooks(["Dune", "Emma", "Ulysses"])
        var request = FetchRequest(entityName: "Book")
        request.sortDescriptors = [SortKey(key: "title", ascending: false)]
        request.fetchLimit = 2
        #expect(try titles(newContext(), request) == ["Ulysses", "Emma"])
        request.sortDescriptors = nil
        #expect(request.sortKeys.isEmpty)
    }
}
