import Foundation
import Testing

@testable import SkerryCore

/// Re-keying from temporary to permanent IDs all at once (`ObjectRegistry.rekeyInBulk`): after a
/// save to the store, in the saving context and in a child adopting its parent's IDs. Sizes pass
/// the identity map's 1,024 objects above which it orders its work by region of the table. Each
/// test checks the registry's invariants itself, so that the check runs in release test builds too.
@Suite struct ObjectRegistryRekeyTests {
    private func checked(_ context: ObjectContext) {
        context.registry.checkInvariants(context: context)
    }

    /// The relationship IDs an object holds, current and committed.
    private func heldIDs(_ object: EntityObject) -> [ObjectID] {
        (object.relationshipValues + (object.committedRelationships ?? [])).flatMap(\.objectIDs)
    }

    /// 100 authors with 10 books each, inserted in `context`.
    private func insertAuthorsAndBooks(_ context: ObjectContext) throws -> (authors: [EntityObject], books: [EntityObject]) {
        var authors: [EntityObject] = []
        var books: [EntityObject] = []
        for a in 0..<100 {
            let author = try context.insertNamed("Author", "Author \(a)")
            authors.append(author)
            for b in 0..<10 {
                let book = try context.insertNamed("Book", "Book \(a).\(b)")
                try book.setRelatedObject(author, forKey: "author")
                books.append(book)
            }
        }
        return (authors, books)
    }

    /// Every object of `objects` is still registered in `context`, the one object of its
    /// permanent ID, and every relationship it holds names permanent IDs of registered objects.
    private func expectRekeyed(_ objects: [EntityObject], in context: ObjectContext) {
        for object in objects {
            #expect(object.context === context && !object.objectID.isTemporary)
            #expect(context.registeredObject(for: object.objectID) === object)
            for id in heldIDs(object) {
                #expect(!id.isTemporary && context.registeredObject(for: id) != nil)
            }
        }
    }

    @Test func aChildParentAndStoreSaveKeepsEveryObjectAndResolvesRelationships() throws {
        let stack = try makeMemoryStack(model: GraphFixtures.model())
        let parent = stack.newBackgroundContext()
        let child = parent.newChildContext()
        let (childAuthors, childBooks) = try child.performAndWait {
            let inserted = try insertAuthorsAndBooks(child)
            try child.save()
            checked(child)
            return inserted
        }
        let (parentObjects, permanentIDs) = try parent.performAndWait {
            let before = parent.registeredObjects
            #expect(before.count == 1100 && parent.insertedObjects.count == 1100)
            checked(parent)
            try parent.save()
            checked(parent)
            // The same instances, now under permanent IDs, their relationships following them.
            #expect(parent.registeredObjects == before && parent.insertedObjects.isEmpty)
            expectRekeyed(Array(before), in: parent)
            for object in before where object.entity.name == "Book" {
                let author = try #require(try object.relatedObject(forKey: "author"))
                #expect(try author.relatedObjects(forKey: "books").contains(object))
            }
            return (before, Set(before.map(\.objectID)))
        }
        #expect(parentObjects.count == 1100 && permanentIDs.count == 1100)
        // The child hears of the parent's save on its queue; a synchronous block runs after it.
        child.performAndWait {}
        try child.performAndWait { () throws in
            checked(child)
            expectRekeyed(childAuthors + childBooks, in: child)
            #expect(Set((childAuthors + childBooks).map(\.objectID)) == permanentIDs)
            for (index, book) in childBooks.enumerated() {
                #expect(try book.relatedObject(forKey: "author") === childAuthors[index / 10])
                #expect(try book.value(forKey: "title", as: String.self) == "Book \(index / 10).\(index % 10)")
            }
            for author in childAuthors { #expect(try author.relatedObjects(forKey: "books").count == 10) }
        }
        // The rows, read by a context of their own.
        let reader = stack.newBackgroundContext()
        try reader.performAndWait {
            let books = try reader.fetch(FetchRequest(entityName: "Book"))
            #expect(books.count == 1000)
            for book in books {
                let author = try #require(try book.relatedObject(forKey: "author"))
                let title = try book.value(forKey: "title", as: String.self)
                #expect(try title.hasPrefix("Book \(author.value(forKey: "name", as: String.self).dropFirst("Author ".count))."))
                #expect(permanentIDs.contains(book.objectID) && permanentIDs.contains(author.objectID))
            }
        }
    }

    /// A save whose inserts are most, but not all, of what the context holds: the identity map
    /// takes the inserts out of their slots and puts them back under their new IDs, leaving the
    /// other objects where they are.
    @Test func aSaveRekeysItsInsertsAmongObjectsAlreadyRegistered() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let saved = try (0..<60).map { try context.insertBook("Saved \($0)", year: Int32($0)) }
            try context.save()
            let savedIDs = saved.map(\.objectID)
            let inserted = try (0..<1100).map { try context.insertBook("New \($0)", year: Int32(1000 + $0)) }
            try saved[0].setValue("Changed", forKey: "title")
            try context.delete(saved[1])
            checked(context)
            try context.save()
            checked(context)
            #expect(context.registry.count == 1159)
            #expect(zip(saved, savedIDs).dropFirst(2).allSatisfy { $0.objectID == $1 && context.registeredObject(for: $1) === $0 })
            #expect(saved[1].context == nil && context.registeredObject(for: savedIDs[1]) == nil)
            expectRekeyed(inserted, in: context)
            #expect(Set(inserted.map(\.objectID)).count == 1100)
            for (index, book) in inserted.enumerated() {
                #expect(try book.value(forKey: "year", as: Int32.self) == Int32(1000 + index))
            }
            let fetched = try context.fetch(FetchRequest(entityName: "Book"))
            #expect(Set(fetched) == Set(inserted + saved.dropFirst(2) + [saved[0]]))
        }
    }

    /// An object registered under the ID another one is re-keyed to leaves the context (one
    /// object per row), as it does when re-keyed one at a time; the others keep their places.
    @Test(arguments: [false, true])
    func anObjectRegisteredUnderAnIDBeingTakenLeavesTheContext(inBulk: Bool) throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let book = try context.insertBook("Saved")
            let kept = try context.insertBook("Kept")
            try context.save()
            let permanentID = book.objectID
            try book.setValue("Changed", forKey: "title") // a pending change, dropped with it
            let inserted = try (0..<(inBulk ? 3 : 1)).map { try context.insertBook("New \($0)") }
            checked(context)
            // Bulk when the moves are at least half the registered objects.
            let moves = inserted.enumerated().map { index, object in
                (object: object, permanentID: index == 0 ? permanentID : ObjectID(space: permanentID.space, key: 1000 + Int64(index)))
            }
            context.registry.rekeyInBulk(expectedCount: moves.count) { rekey in
                for (object, permanentID) in moves { rekey(object, permanentID) }
            }
            checked(context)
            #expect(book.context == nil && context.registeredObject(for: permanentID) === inserted[0])
            #expect(context.updatedObjects.isEmpty && context.insertedObjects.isEmpty)
            #expect(context.registeredObject(for: kept.objectID) === kept)
            for (object, permanentID) in moves { #expect(context.registeredObject(for: permanentID) === object) }
            #expect(context.registry.count == inserted.count + 1)
        }
    }

    /// Objects whose IDs do not change stay where they are; the ones re-keyed are found under
    /// their new IDs only.
    @Test func aBulkRekeyMovesOnlyTheObjectsWhoseIDsChange() throws {
        let stack = try makeMemoryStack()
        let context = stack.newBackgroundContext()
        try context.performAndWait {
            let books = try (0..<2000).map { try context.insertBook("Book \($0)") }
            try context.obtainPermanentIDs(for: Array(books.prefix(1000)))
            let obtained = books.prefix(1000).map(\.objectID)
            checked(context)
            try context.save()
            checked(context)
            #expect(books.prefix(1000).map(\.objectID) == obtained)
            expectRekeyed(books, in: context)
            #expect(Set(books.map(\.objectID)).count == 2000)
            // Half of them to keys no row has, the rest to their own IDs.
            let oldIDs = books.map(\.objectID)
            let moves = books.enumerated().map { index, book in
                (
                    object: book,
                    permanentID: index % 2 == 0 ? ObjectID(space: book.objectID.space, key: 100_000 + Int64(index)) : book.objectID
                )
            }
            context.registry.rekeyInBulk(expectedCount: moves.count) { rekey in
                for (object, permanentID) in moves { rekey(object, permanentID) }
            }
            checked(context)
            for (index, (book, permanentID)) in moves.enumerated() {
                #expect(book.objectID == permanentID && context.registeredObject(for: permanentID) === book)
                if index % 2 == 0 { #expect(context.registeredObject(for: oldIDs[index]) == nil) }
            }
            #expect(context.registry.count == 2000)
        }
    }
}
