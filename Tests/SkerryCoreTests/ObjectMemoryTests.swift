import Foundation
import Testing

@testable import SkerryCore

/// An object's values lie in the object's own memory when it was made loaded (a fetch, an
/// insert, an insert pushed by a child), or in a block of their own (a fault loaded later, made
/// without room for them). Every way in and out of the values keeps them right: faulting and
/// loading again, refreshing, rolling back, resetting, and a fetch that fails midway.
@Suite struct ObjectMemoryTests {
    private func insertBooks(_ stack: PersistentStack, count: Int) throws -> [ObjectID] {
        let context = stack.newBackgroundContext()
        return try context.performAndWait {
            var books: [EntityObject] = []
            for index in 0..<count {
                let book = try context.insert(entityName: "Book")
                try book.setValue("Title \(index) with a long enough string to be on the heap", forKey: "title")
                try book.setValue(Int32(1900 + index), forKey: "year")
                try book.setValue(Data(repeating: UInt8(index), count: 40), forKey: "cover")
                try book.setValue(URL(string: "https://example.com/\(index)")!, forKey: "link")
                books.append(book)
            }
            try context.save()
            return books.map(\.objectID)
        }
    }

    private func expectBook(_ book: EntityObject, _ index: Int) throws {
        #expect(try book.value(forKey: "title", as: String.self) == "Title \(index) with a long enough string to be on the heap")
        #expect(try book.value(forKey: "year", as: Int.self) == 1900 + index)
        #expect(try book.value(forKey: "cover", as: Data.self) == Data(repeating: UInt8(index), count: 40))
        #expect(try book.value(forKey: "link", as: URL.self) == URL(string: "https://example.com/\(index)")!)
        #expect(try book.value(forKey: "sales", as: Int64.self) == 0) // a default
    }

    @Test func fetchedObjectsFaultAndLoadAgainAsOftenAsAsked() throws {
        let stack = try makeMemoryStack()
        let ids = try insertBooks(stack, count: 5)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
            #expect(books.map(\.objectID) == ids)
            for round in 0..<3 {
                for (index, book) in books.enumerated() {
                    try expectBook(book, index)
                    try context.refresh(book, mergeChanges: false)
                    #expect(book.isFault, "round \(round)")
                }
            }
            // A fetch into a context that holds the objects (as faults) loads them again.
            let again = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
            let same = zip(again, books).allSatisfy { $0 === $1 }
            #expect(same)
            for (index, book) in again.enumerated() { try expectBook(book, index) }
        }
    }

    @Test func faultsMadeWithoutValuesLoadFaultAndLoadAgain() throws {
        let stack = try makeMemoryStack()
        let ids = try insertBooks(stack, count: 3)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let faults = ids.map { context.object(with: $0) }
            let allFaults = faults.allSatisfy { $0.isFault }
            #expect(allFaults)
            for _ in 0..<2 {
                for (index, fault) in faults.enumerated() {
                    try expectBook(fault, index)
                    try context.refresh(fault, mergeChanges: false)
                }
            }
            // Rows read into a context that already holds objects: new ones and loaded ones.
            let fetched = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
            for (index, book) in fetched.enumerated() { try expectBook(book, index) }
        }
    }

    /// Whether `object` holds its values in its own memory (not in a block of their own).
    private func holdsValuesInItsOwnMemory(_ object: EntityObject) -> Bool {
        object.state.pointee.hasRoomForValues && object.storage != nil && object.storage == object.inlineStorage
    }

    @Test func aFetchIntoAContextHoldingObjectsReadsNewObjectsIntoTheirOwnMemory() throws {
        let stack = try makeMemoryStack()
        let ids = try insertBooks(stack, count: 8)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            // The context holds a fault (made without room for values) and a loaded object.
            let fault = context.object(with: ids[0])
            let loaded = try #require(
                try context.fetch(FetchRequest(entityName: "Book", predicate: .comparison(key: "year", .equal, .int(1901)))).first)
            let firstFive = try context.fetch(
                FetchRequest(entityName: "Book", predicate: .comparison(key: "year", .lessThan, .int(1905)), sortKeys: [SortKey("year")]))
            #expect(firstFive.map(\.objectID) == Array(ids[0..<5]))
            #expect(firstFive[0] === fault && firstFive[1] === loaded)
            // The objects the context held keep their rules: the fault loads into a block of its
            // own; the new ones hold their values in their own memory: one allocation each.
            #expect(!holdsValuesInItsOwnMemory(fault))
            #expect(holdsValuesInItsOwnMemory(loaded))
            for book in firstFive[2...] { #expect(holdsValuesInItsOwnMemory(book)) }
            // With a pending change, rows are matched with the changes: the same for new objects,
            // and the change stays.
            try firstFive[2].setValue("Changed", forKey: "title")
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
            #expect(books.map(\.objectID) == ids)
            #expect(zip(books, firstFive).allSatisfy { $0 === $1 })
            #expect(try books[2].value(forKey: "title", as: String.self) == "Changed")
            for book in books[5...] { #expect(holdsValuesInItsOwnMemory(book)) }
            for (index, book) in books.enumerated() where index != 2 { try expectBook(book, index) }
            // They fault and load again, and go with the context's reset, like the others.
            try context.refresh(books[6], mergeChanges: false)
            #expect(books[6].isFault)
            try expectBook(books[6], 6)
            #expect(holdsValuesInItsOwnMemory(books[6]))
            context.reset()
            let allInvalid = books.allSatisfy { $0.context == nil }
            #expect(allInvalid)
        }
    }

    @Test func changesRollBackAndRefreshInTheObjectsOwnMemory() throws {
        let stack = try makeMemoryStack()
        _ = try insertBooks(stack, count: 2)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try context.fetch(FetchRequest(entityName: "Book", sortKeys: [SortKey("year")]))
            try books[0].setValue("Changed", forKey: "title")
            try books[0].setValue(nil, forKey: "link")
            #expect(try books[0].value(forKey: "title", as: String.self) == "Changed")
            context.rollback()
            try expectBook(books[0], 0)
            try books[1].setValue("Changed too", forKey: "title")
            try context.refresh(books[1], mergeChanges: true) // keeps the change
            #expect(try books[1].value(forKey: "title", as: String.self) == "Changed too")
            try context.refresh(books[1], mergeChanges: false) // drops it
            try expectBook(books[1], 1)
            try books[1].setValue("Saved", forKey: "title")
            try context.save()
            #expect(try books[1].value(forKey: "title", as: String.self) == "Saved")
            context.reset()
            let allInvalid = books.allSatisfy { $0.context == nil }
            #expect(allInvalid)
            let invalid = #expect(throws: SkerryError.self) { try books[0].value(forKey: "title", as: String.self) }
            #expect(invalid?.code == .objectNotInContext)
        }
    }

    @Test func insertsStartFromTheDefaultsAndChildInsertsArriveWhole() throws {
        let stack = try makeMemoryStack()
        let parent = stack.newBackgroundContext()
        try parent.performAndWait {
            let book = try parent.insert(entityName: "Book")
            #expect(try book.value(forKey: "sales", as: Int64.self) == 0)
            #expect(try book.value(forKey: "inPrint", as: Bool.self) == true)
            #expect(try book.value(forKey: "title", as: String?.self) == nil)
            try book.setValue("Inserted", forKey: "title")
            let child = parent.newChildContext()
            let childID = try child.performAndWait {
                let book = try child.insert(entityName: "Book")
                try book.setValue("From the child", forKey: "title")
                try book.setValue(Data([1, 2, 3]), forKey: "cover")
                try child.save()
                return book.objectID
            }
            let pushed = try parent.existingObject(with: childID)
            #expect(try pushed.value(forKey: "title", as: String.self) == "From the child")
            #expect(try pushed.value(forKey: "cover", as: Data.self) == Data([1, 2, 3]))
            try parent.delete(pushed)
            parent.rollback()
            #expect(book.context == nil) // an unsaved insert rolled back: invalidated
        }
    }

    @Test func aFetchThatFailsMidwayKeepsWhatItHandedOverAndNothingHalfRead() throws {
        let directory = TemporaryDirectory()
        let stack = try makeFileStack(directory)
        _ = try insertBooks(stack, count: 6)
        // The fourth row cannot be read (a year that is not an integer).
        _ = try rawSQL(directory.file("Test.sqlite"), "UPDATE \"Book\" SET \"year\" = 'not a year' WHERE \"year\" = 1903")
        let request = FetchRequest(entityName: "Book", sortKeys: [SortKey("title")])
        for holdsObjects in [false, true] {
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                if holdsObjects {
                    _ = try context.fetch(FetchRequest(entityName: "Book", predicate: .comparison(key: "year", .equal, .int(1900))))
                }
                expectError(.undecodableValue) { _ = try context.fetch(request) }
                // Only whole rows were handed over: the three before the bad one.
                let registered = context.registeredObjects.sorted { $0.objectID.key < $1.objectID.key }
                #expect(registered.count == 3)
                for (index, book) in registered.enumerated() {
                    #expect(!book.isFault)
                    try expectBook(book, index)
                }
                // (In SQLite a text sorts after every number: the bad row is left out.)
                let readable = try context.fetch(
                    FetchRequest(
                        entityName: "Book", predicate: .comparison(key: "year", .lessThan, .int(1903)), sortKeys: [SortKey("title")]))
                #expect(readable.map(\.objectID) == registered.map(\.objectID))
            }
        }
    }
}
