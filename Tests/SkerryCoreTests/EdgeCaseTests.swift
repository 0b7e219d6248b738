import Foundation
import Testing

@testable import SkerryCore

/// Edge cases found in review, each of which once lost data, deadlocked, crashed or disagreed
/// between the store and memory.
@Suite struct EdgeCaseTests {
    @Test(arguments: StoreKind.allCases)
    func aStaleTemporaryIDNamesNoRow(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for index in 0..<50 { try context.insertBook("seed\(index)") }
            let book = try context.insertBook("Dune")
            let temporaryID = book.objectID
            try context.save()

            let ghost = context.object(with: temporaryID)
            #expect(ghost.context == nil)
            expectError(.objectNotInContext) { _ = try ghost.value(forKey: "title", as: String.self) }
            expectError(.objectNotInContext) { try context.delete(ghost) }
            #expect(!context.hasChanges)
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 51)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func savesSpanningTwoStoresInOppositeOrdersDoNotDeadlock() throws {
        let stack = PersistentStack(name: "Two", model: Fixtures.model())
        var books = StoreDescription.inMemory(), authors = StoreDescription.inMemory()
        books.entityNames = ["Book"]
        authors.entityNames = ["Author"]
        stack.persistentStoreDescriptions = [books, authors]
        try stack.loadPersistentStores()
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            let context = stack.newBackgroundContext()
            for round in 0..<150 {
                try! context.performAndWait {
                    func author() throws { try context.insert(entityName: "Author").setValue("a\(worker)-\(round)", forKey: "name") }
                    if worker == 0 {
                        try context.insertBook("b\(worker)-\(round)")
                        try author()
                    } else {
                        try author()
                        try context.insertBook("b\(worker)-\(round)")
                    }
                    try context.save()
                }
            }
        }
        let counts = try stack.viewContext.performAndWait {
            (
                try stack.viewContext.count(for: FetchRequest(entityName: "Book")),
                try stack.viewContext.count(for: FetchRequest(entityName: "Author"))
            )
        }
        #expect(counts == (300, 300))
    }

    @Test(arguments: StoreKind.allCases)
    func decimalEqualityAgreesInStoreAndMemory(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        let price = Decimal(string: "0.07")!
        let request = FetchRequest(entityName: "Book", predicate: AttributeKey("price") == price)
        try context.performAndWait {
            try context.insertBook("Cheap").setValue(price, forKey: "price")
            #expect(try context.count(for: request) == 1) // in memory, unsaved
            try context.save()
            #expect(try context.count(for: request) == 1) // in SQL
        }
    }

    @Test func aChangeBetweenCanonicallyEqualStringsIsSaved() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook(precomposed)
            try context.save()
            try book.setValue(decomposed, forKey: "title")
            #expect(book.isUpdated)
            try context.save()
        }
        #expect(try rawSQL(directory.file("Test.sqlite"), "SELECT hex(title) FROM Book") == [["63616665CC81"]]) // "cafe" + U+0301
    }

    @Test func aHugeLimitWithAnOffsetAndPendingChangesDoesNotOverflow() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        let titles = try context.performAndWait {
            try context.insertBook("A")
            try context.insertBook("B")
            try context.insertBook("C")
            var request = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])
            request.fetchOffset = 1
            request.fetchLimit = .max
            return try context.fetch(request).map { try $0.value(forKey: "title", as: String.self) }
        }
        #expect(titles == ["B", "C"])
    }

    @Test(arguments: StoreKind.allCases)
    func aDeletedFaultCanStillBeRead(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let id = try stack.viewContext.performAndWait {
            let book = try stack.viewContext.insertBook("Dune")
            try stack.viewContext.save()
            return book.objectID
        }
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let fault = context.object(with: id)
            try context.delete(fault)
            #expect(try fault.value(forKey: "title", as: String.self) == "Dune")
            try context.save()
        }
        #expect(try context.performAndWait { try context.count(for: FetchRequest(entityName: "Book")) } == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func deletingAndReinsertingAUniqueValueInOneSaveWorks(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let old = try context.insertBook("Old", isbn: "X")
            try context.save()
            try context.delete(old)
            try context.insertBook("New", isbn: "X")
            try context.save()
            let titles = try context.fetch(FetchRequest(entityName: "Book")).map { try $0.value(forKey: "title", as: String.self) }
            #expect(titles == ["New"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletingARowChangedElsewhereIsAConflict(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let first = stack.newBackgroundContext(), second = stack.newBackgroundContext()
        first.automaticallyMergesChangesFromParent = false // it must not learn of the other save
        let id = try first.performAndWait {
            let book = try first.insertBook("Dune")
            try first.save()
            return book.objectID
        }
        try second.performAndWait {
            try second.existingObject(with: id).setValue("Dune (revised)", forKey: "title")
            try second.save()
        }
        try first.performAndWait {
            try first.delete(first.existingObject(with: id))
            let error = expectError(.mergeConflict) { try first.save() }
            #expect(error?.objectIDs == [id])
            // After a refresh the delete goes through; deleting a row already gone is no conflict.
            first.rollback()
            try first.refresh(first.existingObject(with: id), mergeChanges: false)
            try first.delete(first.existingObject(with: id))
            try first.save()
        }
        #expect(try second.performAndWait { try second.count(for: FetchRequest(entityName: "Book")) } == 0)
    }

    @Test func loadingFromTwoThreadsAtOnceOpensEachStoreOnce() throws {
        let directory = TemporaryDirectory()
        let stack = PersistentStack(name: "Once", model: Fixtures.model())
        stack.persistentStoreDescriptions = [StoreDescription(url: directory.file("Once.sqlite"))]
        DispatchQueue.concurrentPerform(iterations: 4) { _ in try! stack.loadPersistentStores() }
        #expect(stack.coordinator.loadedStores.count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func aCountOnlyBatchDeleteReportsTheCountAndDeletesTheRows(kind: StoreKind) throws {
        let (stack, directory) = try makeStack(kind)
        _ = directory
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            for year in [1950, 1960, 1990] as [Int32] { try context.insertBook("B\(year)", year: year) }
            try context.save()
            context.reset()
            #expect(!context.hasRegisteredObjects(ofEntity: "Book"))
            var request = BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("year") < 1970)
            request.resultType = .count
            let result = try context.execute(request)
            #expect(result.count == 2)
            #expect(result.deletedObjectIDs.isEmpty)
            #expect(try context.count(for: FetchRequest(entityName: "Book")) == 1)
        }
    }
}
