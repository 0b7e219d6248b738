import Foundation
import Testing

@testable import SkerryCore

private let shelf: [(String, Int32?)] = [
    ("Dune", 1965), ("Dune Messiah", 1969), ("Children of Dune", 1976), ("Neuromancer", 1984),
    ("Count Zero", 1986), ("Hyperion", 1989), ("Crème brûlée", nil), ("Foundation", 1951),
    ("The Hobbit", 1937), ("Untitled", nil),
]

private func titles(_ objects: [EntityObject]) throws -> [String] {
    try objects.map { try $0.value(forKey: "title", as: String.self) }.sorted()
}

private func allBooks(_ predicate: FetchPredicate? = nil) -> FetchRequest {
    FetchRequest(entityName: "Book", predicate: predicate, sortKeys: [SortKey("title")])
}

/// A stack holding the shelf and two authors, saved; returns the books' IDs by title.
private func filledStack(_ kind: StoreKind) throws -> (PersistentStack, TemporaryDirectory?, [String: ObjectID]) {
    let (stack, directory) = try makeStack(kind)
    let context = stack.newBackgroundContext()
    let ids = try context.performAndWait {
        var books: [String: EntityObject] = [:]
        for (title, year) in shelf { books[title] = try context.insertBook(title, year: year) }
        for name in ["Herbert", "Gibson"] {
            let author = try context.insert(entityName: "Author")
            try author.setValue(name, forKey: "name")
        }
        try context.save()
        return books.mapValues(\.objectID)
    }
    return (stack, directory, ids)
}

/// The titles of the books in the store, read by a fresh context (and, for a file store, by a raw
/// SQLite connection).
private func storedTitles(_ stack: PersistentStack, _ directory: TemporaryDirectory?) throws -> [String] {
    let context = stack.newBackgroundContext()
    let fetched = try context.performAndWait { try titles(context.fetch(allBooks())) }
    if let directory {
        let raw = try rawSQL(directory.file("Test.sqlite"), "SELECT \"title\" FROM \"Book\"").map { $0[0] }.sorted()
        #expect(raw == fetched)
    }
    return fetched
}

@Suite struct BatchDeleteTests {
    @Test(arguments: StoreKind.allCases)
    func deletesMatchingRowsWithoutLoadingThem(kind: StoreKind) throws {
        let (stack, directory, ids) = try filledStack(kind)
        let context = stack.newBackgroundContext()
        let result = try context.performAndWait {
            let result = try context.execute(
                BatchDeleteRequest(
                    entityName: "Book",
                    predicate: AttributeKey("year") < Int32(1980)))
            // Nothing was loaded into the context, and it has nothing to save.
            #expect(context.registeredObjects.isEmpty)
            #expect(!context.hasChanges)
            return result
        }
        let deleted = ["Dune", "Dune Messiah", "Children of Dune", "Foundation", "The Hobbit"]
        #expect(result.count == 5)
        #expect(result.deletedObjectIDs.count == 5)
        #expect(Set(result.deletedObjectIDs) == Set(deleted.map { ids[$0]! }))
        #expect(result.changes == StoreChanges(deleted: Set(deleted.map { ids[$0]! })))
        // Rows with a nil year do not match `year < 1980` and stay.
        #expect(try storedTitles(stack, directory) == ["Count Zero", "Crème brûlée", "Hyperion", "Neuromancer", "Untitled"])
        // Other entities are untouched.
        let authors = try context.performAndWait { try context.count(for: FetchRequest(entityName: "Author")) }
        #expect(authors == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func liveContextSeesDeleteOnlyAfterMerge(kind: StoreKind) throws {
        let (stack, directory, ids) = try filledStack(kind)
        _ = directory
        let live = stack.newBackgroundContext()
        let worker = stack.newBackgroundContext()
        let duneID = ids["Dune"]!, messiahID = ids["Dune Messiah"]!, childrenID = ids["Children of Dune"]!
        // The live context has every book registered and loaded.
        let registered = try live.performAndWait { try live.fetch(allBooks()).count }
        #expect(registered == shelf.count)
        let result = try worker.performAndWait {
            try worker.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("title").beginsWith("Dune")))
        }
        #expect(Set(result.deletedObjectIDs) == [duneID, messiahID])

        try live.performAndWait {
            // Before the merge: the objects are still registered and readable.
            let dune = try #require(live.registeredObject(for: duneID))
            let messiah = try #require(live.registeredObject(for: messiahID))
            #expect(try dune.value(forKey: "title", as: String.self) == "Dune")
            #expect(try messiah.value(forKey: "year", as: Int32?.self) == 1969)
            #expect(!dune.isDeleted)
            // A pending change on a deleted object keeps it in fetches that include pending changes.
            try dune.setValue(Int32(1966), forKey: "year")
            #expect(try titles(live.fetch(allBooks(AttributeKey("year") == Int32(1966)))) == ["Dune"])

            live.mergeChanges(result.changes)

            // After the merge: gone from the registry, from fetches, and old references are dead.
            #expect(live.registeredObject(for: duneID) == nil)
            #expect(live.registeredObject(for: messiahID) == nil)
            #expect(live.registeredObject(for: childrenID) != nil)
            #expect(dune.context == nil)
            #expect(!live.hasChanges)
            #expect(try live.fetch(allBooks(AttributeKey("year") == Int32(1966))).isEmpty)
            let remaining = try titles(live.fetch(allBooks()))
            #expect(remaining.count == shelf.count - 2)
            #expect(!remaining.contains("Dune") && !remaining.contains("Dune Messiah"))
            #expect(try live.count(for: allBooks(AttributeKey("title").beginsWith("Dune"))) == 0)
            expectError(.objectNotInContext) { _ = try dune.value(forKey: "title", as: String.self) }
            expectError(.objectNotInContext) { _ = try messiah.value(forKey: "year", as: Int32?.self) }
            expectError(.objectNotInContext) { try messiah.setValue("Again", forKey: "title") }
            expectError(.objectNotFound) { _ = try live.existingObject(with: duneID) }
            // The context saves cleanly afterwards.
            let children = try #require(live.registeredObject(for: childrenID))
            try children.setValue(Int32(1977), forKey: "year")
            try live.save()
        }
        #expect(try storedTitles(stack, directory).count == shelf.count - 2)
    }

    @Test(arguments: StoreKind.allCases)
    func faultsOfDeletedRowsReportNotFound(kind: StoreKind) throws {
        let (stack, directory, ids) = try filledStack(kind)
        _ = directory
        let live = stack.newBackgroundContext()
        let worker = stack.newBackgroundContext()
        try live.performAndWait {
            let fault = live.object(with: ids["Neuromancer"]!)
            #expect(fault.isFault)
            let result = try worker.performAndWait {
                try worker.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("title") == "Neuromancer"))
            }
            #expect(result.deletedObjectIDs == [ids["Neuromancer"]!])
            expectError(.objectNotFound) { _ = try fault.value(forKey: "title", as: String.self) }
            live.mergeChanges(result.changes)
            #expect(live.registeredObject(for: ids["Neuromancer"]!) == nil)
            expectError(.objectNotInContext) { _ = try fault.value(forKey: "title", as: String.self) }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func nilPredicateDeletesEveryRowOfTheEntity(kind: StoreKind) throws {
        let (stack, directory, ids) = try filledStack(kind)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let result = try context.execute(BatchDeleteRequest(entityName: "Book"))
            #expect(result.count == shelf.count)
            #expect(Set(result.deletedObjectIDs) == Set(ids.values))
            #expect(try context.count(for: allBooks()) == 0)
            #expect(try context.count(for: FetchRequest(entityName: "Author")) == 2)
            // Keys are never reused: a new book gets a new ID.
            let book = try context.insertBook("Fresh", year: 2024)
            try context.save()
            #expect(!ids.values.contains(book.objectID))
            // Deleting again finds only the new row.
            let again = try context.execute(BatchDeleteRequest(entityName: "Book"))
            #expect(again.deletedObjectIDs == [book.objectID])
        }
        #expect(try storedTitles(stack, directory).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func noMatchesDeletesNothing(kind: StoreKind) throws {
        let (stack, directory, _) = try filledStack(kind)
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let none = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("year") > Int32(3000)))
            #expect(none.count == 0)
            #expect(none.deletedObjectIDs.isEmpty)
            #expect(none.changes.isEmpty)
            let never = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: .constant(false)))
            #expect(never.count == 0)
            // An injection attempt is only a value.
            let injection = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("title") == "x' OR 1=1 --"))
            #expect(injection.count == 0)
            // Merging empty changes changes nothing.
            let before = try context.fetch(allBooks())
            context.mergeChanges(none.changes)
            #expect(context.registeredObjects.count == before.count)
        }
        #expect(try storedTitles(stack, directory).count == shelf.count)
        // An entity with no rows at all.
        let (emptyStack, emptyDirectory) = try makeStack(kind)
        _ = emptyDirectory
        let empty = emptyStack.newBackgroundContext()
        try empty.performAndWait {
            let result = try empty.execute(BatchDeleteRequest(entityName: "Author"))
            #expect(result.count == 0)
            #expect(result.deletedObjectIDs.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func predicatesSelectTheSameRowsAsFetch(kind: StoreKind) throws {
        let predicates: [FetchPredicate] = [
            AttributeKey("title").contains("creme", options: [.caseInsensitive, .diacriticInsensitive]),
            AttributeKey("title").like("*Dune*") && !(AttributeKey("year") == Int32(1965)),
            AttributeKey("year").isNil || AttributeKey("year").between(Int32(1980)...1990),
            !(AttributeKey("year") < Int32(1970)),
            AttributeKey("title").isIn(["Dune", "Hyperion", "Nothing"]),
        ]
        for predicate in predicates {
            let (stack, directory, _) = try filledStack(kind)
            let context = stack.newBackgroundContext()
            try context.performAndWait {
                let expected = try context.fetchObjectIDs(allBooks(predicate))
                #expect(!expected.isEmpty, "\(predicate)")
                let result = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: predicate))
                #expect(Set(result.deletedObjectIDs) == Set(expected), "\(predicate)")
                #expect(try context.count(for: allBooks(predicate)) == 0, "\(predicate)")
                #expect(try context.count(for: allBooks()) == shelf.count - expected.count, "\(predicate)")
            }
            _ = directory
        }
    }

    @Test(arguments: StoreKind.allCases)
    func badRequestsThrowAndDeleteNothing(kind: StoreKind) throws {
        let (stack, directory, _) = try filledStack(kind)
        let context = stack.newBackgroundContext()
        context.performAndWait {
            expectError(.unknownEntity) { _ = try context.execute(BatchDeleteRequest(entityName: "Nope")) }
            expectError(.unknownAttribute) {
                _ = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("nope") == 1))
            }
            expectError(.wrongValueType) {
                _ = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("year") == "1965"))
            }
            expectError(.wrongValueType) {
                _ = try context.execute(BatchDeleteRequest(entityName: "Book", predicate: AttributeKey("year").contains("19")))
            }
        }
        #expect(try storedTitles(stack, directory).count == shelf.count)
    }
}
